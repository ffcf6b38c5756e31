package apiserver

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/pkg/admission"
)

// runWriteSteps runs the server's own mutating steps (Config.WriteSteps)
// on obj, where upstream's PrepareForCreate/PrepareForUpdate run: after
// mutating admission, before validation and validating admission, which
// therefore see what is stored. They run on every create and update, with
// or without admission; each leaves its own step in the request's record
// and is metered as an admission controller of type "admit".
func (s *Server) runWriteSteps(ctx context.Context, a *admission.Attributes, obj runtime.Object) (runtime.Object, error) {
	if len(s.cfg.WriteSteps) == 0 {
		return obj, nil
	}
	sa := *a
	sa.Object = obj
	for _, p := range s.cfg.WriteSteps {
		m, ok := p.Plugin.(admission.Mutator)
		if !ok || !m.Handles(sa.Operation) {
			continue
		}
		start := time.Now()
		err := m.Admit(ctx, &sa)
		s.cfg.AdmissionMetrics.ObservePlugin(time.Since(start), err != nil, sa.Operation, "admit", p.Name)
		if err != nil {
			return nil, err
		}
	}
	return sa.Object, nil
}
