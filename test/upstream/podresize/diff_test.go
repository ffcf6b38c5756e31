// Package podresize compares admitd's pods/resize strategy
// (internal/registry: the preparation and validation of an update through
// the resize subresource) with upstream's pod.ResizeStrategy
// (PrepareForUpdate, then ValidateUpdate, on the internal pods
// kube-apiserver decodes): the resulting pod and every error (type, field,
// detail, message), over generated old/new pod pairs under several
// settings of the gates the strategy reads.
package podresize

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/core/helper/qos"
	podregistry "k8s.io/kubernetes/pkg/registry/core/pod"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/features"
	"github.com/admitd/admitd/test/upstream/internal/updiff"
)

// setting is one combination of the gates the resize strategy reads.
type setting struct {
	name  string
	gates map[string]bool
	// noPodLevel: stored pods have no pod-level resources (a cluster that
	// never had the PodLevelResources gate on).
	noPodLevel bool
}

var settings = []setting{
	{name: "defaults", gates: nil},
	{name: "InPlacePodLevelResourcesVerticalScaling=false", gates: map[string]bool{"InPlacePodLevelResourcesVerticalScaling": false}},
	{name: "InPlacePodVerticalScalingMemoryBackedVolumes=true", gates: map[string]bool{"InPlacePodVerticalScalingMemoryBackedVolumes": true}},
	{name: "MemoryBackedVolumes+EmptyDirVolumeMode=true", gates: map[string]bool{"InPlacePodVerticalScalingMemoryBackedVolumes": true, "EmptyDirVolumeMode": true}},
	{name: "PodLevelResourcesFixDefaulting=false", gates: map[string]bool{"PodLevelResourcesFixDefaulting": false}},
	{name: "PodLevelResourcesFixKubeletQOSClass=false", gates: map[string]bool{"PodLevelResourcesFixKubeletQOSClass": false}},
	{name: "PodLevelResources=false", gates: map[string]bool{"PodLevelResources": false, "InPlacePodLevelResourcesVerticalScaling": false,
		"PodLevelResourcesFixDefaulting": false, "PodLevelResourcesFixKubeletQOSClass": false}, noPodLevel: true},
}

// pairsPerSetting are the generated pairs compared under each setting.
const pairsPerSetting = 700

func TestGenerated(t *testing.T) {
	cat := registry.NewCatalogue()
	res, ok := cat.Lookup(corev1.SchemeGroupVersion.WithResource("pods"))
	if !ok {
		t.Fatal("no pods resource")
	}
	total, refused, changed := 0, 0, 0
	outcomes := map[string]int{}
	for si, s := range settings {
		t.Run(s.name, func(t *testing.T) {
			overrides := featuregatetesting.FeatureOverrides{}
			for name, on := range s.gates {
				overrides[featuregate.Feature(name)] = on
			}
			featuregatetesting.SetFeatureGatesDuringTest(t, utilfeature.DefaultFeatureGate, overrides)
			ours := features.New()
			if err := ours.SetFromMap(s.gates); err != nil {
				t.Fatal(err)
			}
			cat.SetFeatureGates(ours)
			g := &generator{rng: rand.New(rand.NewSource(int64(si + 1))), t: t, noPodLevel: s.noPodLevel}
			for i := range pairsPerSetting {
				old, sent, what := g.pair()
				name := fmt.Sprintf("%s #%d (%s)", s.name, i, what)
				upPod, upErrs := upstreamResize(t, sent, old)
				ourPod, ourErrs := oursResize(res, sent, old)
				total++
				if len(upErrs) > 0 {
					refused++
					outcomes[strings.TrimRight(strings.SplitN(upErrs[0].Detail, " of ", 2)[0], " ")]++
				} else if upPod.Generation != old.Generation {
					changed++
				}
				compare(t, name, old, sent, upPod, ourPod, upErrs, ourErrs)
			}
		})
	}
	t.Logf("%d resizes compared: %d refused, %d accepted with a spec change", total, refused, changed)
	for d, n := range outcomes {
		t.Logf("  %5d refused first with %q", n, d)
	}
}

// upstreamResize runs upstream's resize strategy on the internal pods, as
// kube-apiserver's update does after mutating admission (BeforeUpdate
// keeps the old generation before PrepareForUpdate).
func upstreamResize(t *testing.T, sent, old *corev1.Pod) (*corev1.Pod, field.ErrorList) {
	t.Helper()
	uNew := updiff.ToInternal(t, sent).(*core.Pod)
	uOld := updiff.ToInternal(t, old).(*core.Pod)
	uNew.Generation = uOld.Generation
	ctx := context.Background()
	podregistry.ResizeStrategy.PrepareForUpdate(ctx, uNew, uOld)
	errs := podregistry.ResizeStrategy.ValidateUpdate(ctx, uNew, uOld)
	out := &corev1.Pod{}
	updiff.ToVersion(t, uNew, out)
	return out, errs
}

// oursResize is what admitd's update does through pods/resize.
func oursResize(res *registry.Resource, sent, old *corev1.Pod) (*corev1.Pod, field.ErrorList) {
	obj, stored := sent.DeepCopy(), old.DeepCopy()
	obj.Generation = old.Generation
	out := registry.PrepareForUpdate(res, "resize", obj, stored).(*corev1.Pod)
	return out, res.ValidateSubresourceChange("resize", out, stored)
}

func compare(t *testing.T, name string, old, sent, upPod, ourPod *corev1.Pod, upErrs, ourErrs field.ErrorList) {
	t.Helper()
	if !apiequality.Semantic.DeepEqual(upPod, ourPod) {
		t.Errorf("%s: resulting pod differs (-upstream +admitd):\n%s", name, cmp.Diff(upPod, ourPod))
	}
	// Upstream reports the resources of a list in map order: compare the
	// errors as sets.
	u, o := describe(upErrs), describe(ourErrs)
	sort.Strings(u)
	sort.Strings(o)
	if !cmp.Equal(u, o) {
		t.Errorf("%s: errors differ (-upstream +admitd):\n%s\nold: %s\nsent: %s", name, cmp.Diff(u, o), dump(old), dump(sent))
	}
}

// describe renders each error as its type, field and detail, and its
// message as the API reports it.
func describe(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%s|%s|%s", e.Type, e.Field, e.Detail), e.Error())
	}
	return out
}

func dump(p *corev1.Pod) string {
	return fmt.Sprintf("%+v status=%+v", p.Spec, p.Status)
}

// computeQOS is upstream's QoS class of a v1 pod (the class kube-apiserver
// stores on create).
func computeQOS(t testing.TB, p *corev1.Pod) corev1.PodQOSClass {
	return corev1.PodQOSClass(qos.ComputePodQOS(updiff.ToInternal(t, p).(*core.Pod)))
}

// defaulted applies kube-apiserver's v1 defaulting to p, as decoding does.
func defaulted(p *corev1.Pod) *corev1.Pod {
	legacyscheme.Scheme.Default(p)
	return p
}
