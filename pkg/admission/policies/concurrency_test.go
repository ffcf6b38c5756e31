package policies_test

import (
	"context"
	"sync"
	"testing"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/policies"
)

// TestConcurrentRequests runs requests in parallel against plugins that
// compile on first use (run with -race).
func TestConcurrentRequests(t *testing.T) {
	for _, name := range []string{"spec-22-audit-annotation-params", "mapspec-117-reinvocation", "vap-variables"} {
		c := readCase(t, "testdata/"+name+"/case.yaml")
		want := runCase(t, c)
		store, snap := newObjectStore(), &policies.Snapshot{}
		for _, raw := range c.Objects {
			addObject(t, store, snap, raw, !c.NoDefaults)
		}
		o := policies.Options{Source: policies.StaticSource{Snapshot: snap}, Params: store, TypeConverters: widgetConverters}
		pc := admission.PluginContext{Namespaces: store, Schema: fakeSchema{}, Authorizer: denySecrets}
		m, err := policies.NewMutating(o, pc)
		if err != nil {
			t.Fatal(err)
		}
		v, err := policies.NewValidating(o, pc)
		if err != nil {
			t.Fatal(err)
		}
		chain := admission.NewChain(admission.NamedPlugin{Name: policies.MutatingName, Plugin: m},
			admission.NamedPlugin{Name: policies.ValidatingName, Plugin: v})
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					a := c.Request.attributes(t)
					err := chain.Admit(context.Background(), a)
					if err == nil {
						err = chain.Validate(context.Background(), a)
					}
					if got := result(t, a, err, c.Request.Object); got.Allowed != want.Allowed {
						t.Errorf("%s: allowed = %v, want %v", name, got.Allowed, want.Allowed)
					}
				}
			}()
		}
		wg.Wait()
	}
}
