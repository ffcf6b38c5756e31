package apiserver

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/serviceaccount"
)

// tokenReviewer is what TokenReview asks: Config.TokenAuthenticator, then
// the service-account tokens (Config.ServiceAccountAuthenticators).
func (s *Server) tokenReviewer() auth.AudienceTokenAuthenticator {
	sa := s.cfg.ServiceAccountAuthenticators
	if sa == nil {
		own := s.tokens.Authenticator(serviceaccount.NewGetter(s.getStored))
		own.Now = s.cfg.Now
		sa = []auth.AudienceTokenAuthenticator{own}
	}
	if s.cfg.TokenAuthenticator == nil {
		return auth.TokenReviewer(sa...)
	}
	return auth.TokenReviewer(append([]auth.AudienceTokenAuthenticator{s.cfg.TokenAuthenticator}, sa...)...)
}

// getStored reads one object of a served resource from storage, as a
// missing one's NotFound.
func (s *Server) getStored(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	res, ok := s.cat.Lookup(gvr)
	if !ok {
		return nil, fmt.Errorf("no resource %s", gvr.Resource)
	}
	return s.getObject(ctx, res, namespace, name)
}
