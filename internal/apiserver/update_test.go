package apiserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

// Patches without a resourceVersion that race are applied one after the
// other, as upstream's GuaranteedUpdate does; a body whose resourceVersion
// is stale is still a conflict.
func TestConcurrentPatchesAreRetried(t *testing.T) {
	ts := newTestServer(t)
	created := ts.must(201, "POST", cmPath, "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"}}`)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 20 {
				patch := fmt.Sprintf(`{"data":{"g%d-%d":"x"}}`, g, i)
				if w := ts.do("PATCH", cmPath+"/cm", mediaMergePatch, patch); w.Code != 200 {
					t.Errorf("PATCH %s = %d %s, want 200", patch, w.Code, w.Body.String())
				}
			}
		})
	}
	wg.Wait()
	w := ts.do("GET", cmPath+"/cm", "", "")
	if n := strings.Count(w.Body.String(), `":"x"`); n != 80 {
		t.Errorf("ConfigMap has %d of the 80 keys patched in", n)
	}
	stale := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","resourceVersion":%q}}`, created.ResourceVersion)
	if w := ts.do("PUT", cmPath+"/cm", "application/json", stale); w.Code != 409 || !strings.Contains(w.Body.String(), optimisticLockMsg) {
		t.Errorf("PUT with a stale resourceVersion = %d %s, want 409 %q", w.Code, w.Body.String(), optimisticLockMsg)
	}
}

// refusingUpdates is a mutating plugin that refuses every update, counting
// the ones it saw.
type refusingUpdates struct{ seen atomic.Int32 }

func (*refusingUpdates) Handles(op admission.Operation) bool { return op == admission.Update }

func (r *refusingUpdates) Admit(context.Context, *admission.Attributes) error {
	r.seen.Add(1)
	return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "cm", errors.New("no updates"))
}

// A stale update meets mutating admission first, as in upstream's store
// (mutating admission runs inside GuaranteedUpdate, before the
// resourceVersion check): the plugin's refusal is the answer, not a
// conflict, and the plugin saw it.
func TestStaleUpdateMeetsMutatingAdmissionFirst(t *testing.T) {
	plugin := &refusingUpdates{}
	ts := newTestServer(t, admission.NamedPlugin{Name: "RefuseUpdates", Plugin: plugin})
	created := ts.must(201, "POST", cmPath, "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"}}`)
	stale := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","resourceVersion":"%d"}}`, mustAtoi(t, created.ResourceVersion)-1)
	w := ts.do("PUT", cmPath+"/cm", "application/json", stale)
	if w.Code != 403 || !strings.Contains(w.Body.String(), "no updates") || plugin.seen.Load() != 1 {
		t.Fatalf("stale PUT = %d %s (plugin saw %d updates), want 403 from the plugin", w.Code, w.Body.String(), plugin.seen.Load())
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// staleScale is a mutating plugin that gives every Scale it admits the
// resourceVersion "1".
type staleScale struct{}

func (staleScale) Handles(op admission.Operation) bool { return op == admission.Update }

func (staleScale) Admit(_ context.Context, a *admission.Attributes) error {
	if sc, ok := a.Object.(*autoscalingv1.Scale); ok {
		sc.ResourceVersion = "1"
	}
	return nil
}

// The resourceVersion of the Scale mutating admission returns is the
// update's precondition, as upstream's scale subresource copies it onto
// the object before its store checks it.
func TestScaleResourceVersionFromAdmission(t *testing.T) {
	ts := newTestServer(t, admission.NamedPlugin{Name: "StaleScale", Plugin: staleScale{}})
	const deployPath = "/apis/apps/v1/namespaces/default/deployments/web"
	ts.must(201, "POST", "/apis/apps/v1/namespaces/default/deployments", "application/json", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":2,
	  "selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`)
	if w := ts.do("PATCH", deployPath+"/scale", mediaMergePatch, `{"spec":{"replicas":3}}`); w.Code != 409 {
		t.Fatalf("scale with a stale resourceVersion from admission = %d %s, want 409", w.Code, w.Body)
	}
}
