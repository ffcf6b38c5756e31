package podwarnings

import (
	"context"
	"math/rand"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/kubernetes/pkg/registry/core/pod"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/test/upstream/internal/updiff"
)

// recorder collects what upstream adds to a request's warnings.
type recorder []string

func (r *recorder) AddWarning(_, text string) { *r = append(*r, text) }

// TestPodAppArmorSyncLikeUpstream: a Pod create warns about deprecated
// AppArmor annotations while upstream's PrepareForCreate copies them into
// the containers' fields; admitd's PrepareWarnings (from the pod before
// preparation) give the same texts, and preparation the same fields.
func TestPodAppArmorSyncLikeUpstream(t *testing.T) {
	res, ok := registry.NewCatalogue().Lookup(corev1.SchemeGroupVersion.WithResource("pods"))
	if !ok {
		t.Fatal("pods not served")
	}
	g := gen{rand.New(rand.NewSource(41))}
	const n = 3000
	warned := 0
	for i := 0; i < n && !t.Failed(); i++ {
		p := g.pod()
		var rec recorder
		in := updiff.ToInternal(t, p)
		pod.Strategy.PrepareForCreate(warning.WithWarningRecorder(context.Background(), &rec), in)
		var upPrepared corev1.Pod
		updiff.ToVersion(t, in, &upPrepared)

		ours := p.DeepCopy()
		got := res.PrepareWarnings(ours)
		registry.PrepareForCreate(res, ours)
		if !slices.Equal(got, []string(rec)) {
			t.Errorf("pod %d: warnings\n %q\nupstream\n %q\npod: %+v", i, got, []string(rec), p)
		}
		if d := cmp.Diff(appArmorFields(&upPrepared), appArmorFields(ours)); d != "" {
			t.Errorf("pod %d: containers' AppArmor profiles after preparation (-upstream +admitd):\n%s\npod: %+v", i, d, p)
		}
		if len(rec) > 0 {
			warned++
		}
	}
	t.Logf("%d pods prepared, %d warned", n, warned)
	if warned < n/10 {
		t.Errorf("%d of %d pods warned: the generator no longer reaches the warning", warned, n)
	}
}

func appArmorFields(p *corev1.Pod) []*corev1.AppArmorProfile {
	var out []*corev1.AppArmorProfile
	each := func(cs []corev1.Container) {
		for _, c := range cs {
			if c.SecurityContext == nil {
				out = append(out, nil)
				continue
			}
			out = append(out, c.SecurityContext.AppArmorProfile)
		}
	}
	each(p.Spec.InitContainers)
	each(p.Spec.Containers)
	for _, c := range p.Spec.EphemeralContainers {
		each([]corev1.Container{corev1.Container(c.EphemeralContainerCommon)})
	}
	return out
}
