package webhooks

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/match"
)

// compiledHook is the precompiled matching part of a hook.
type compiledHook struct {
	criteria *match.Criteria
}

func (h *Hook) compile() *compiledHook {
	h.compileOnce.Do(func() {
		h.compiled = &compiledHook{criteria: match.Webhook(h.Rules, h.MatchPolicy, h.NamespaceSelector, h.ObjectSelector)}
	})
	return h.compiled
}

// hookList is an ordered list of hooks with its match index.
type hookList struct {
	hooks []*Hook
	index *match.Index
}

func newHookList(hooks []*Hook) hookList {
	criteria := make([]*match.Criteria, len(hooks))
	for i, h := range hooks {
		criteria[i] = h.compile().criteria
	}
	return hookList{hooks: hooks, index: match.NewIndex(criteria)}
}

// candidates returns the hooks whose rules could match the request, in order.
func (l hookList) candidates(mr *match.Request) []*Hook {
	if len(l.hooks) == 0 {
		return nil
	}
	var buf [16]int32
	idx := l.index.Candidates(mr, buf[:0])
	out := make([]*Hook, len(idx))
	for i, n := range idx {
		out[i] = l.hooks[n]
	}
	return out
}

// matchEnv is the matching environment of the dispatcher.
func (d *dispatcher) matchEnv() match.Env {
	return match.Env{Namespaces: d.namespaces, Equivalents: d.schema}
}

// shouldCall decides whether h is called for the request; nil means skip.
// Errors (a missing namespace, a bad selector, a failed condition under
// failurePolicy Fail) end the request.
func (d *dispatcher) shouldCall(ctx context.Context, mr *match.Request, h *Hook, a *admission.Attributes) (*invocation, error) {
	dec := h.compile().criteria.Match(mr)
	switch dec.Reason {
	case match.Matched:
	case match.Errored:
		return nil, dec.Err
	default:
		return nil, nil
	}
	inv := &invocation{Resource: dec.Resource, Subresource: dec.Subresource, Kind: dec.Kind, Object: a.Object, OldObject: a.OldObject}
	if dec.Kind != a.Kind {
		var err error
		if inv.Object, err = d.convert(a.Object, dec); err != nil {
			return nil, err
		}
		if inv.OldObject, err = d.convert(a.OldObject, dec); err != nil {
			return nil, err
		}
	}
	return inv, nil
}

func (d *dispatcher) convert(obj runtime.Object, dec match.Decision) (runtime.Object, error) {
	if obj == nil {
		return nil, nil
	}
	out, err := d.schema.ConvertTo(obj, dec.Kind)
	if err != nil {
		return nil, internalError(err)
	}
	return out, nil
}
