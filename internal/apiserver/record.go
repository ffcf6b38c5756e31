package apiserver

import (
	"context"

	"github.com/admitd/admitd/pkg/admission"
)

// RequestRecord returns the audit annotations and warnings of the request
// ctx belongs to, for steps that run before the request is routed (an
// authenticator); nil outside a request of this server.
func RequestRecord(ctx context.Context) *admission.Record {
	if rq := requestFrom(ctx); rq != nil {
		return rq.record
	}
	return nil
}
