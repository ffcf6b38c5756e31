package limitranger

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

// TestAnnotationTextReusesTheLastOne: the same text gives the string made
// last time without allocating; another text gives its own.
func TestAnnotationTextReusesTheLastOne(t *testing.T) {
	c := &compiledRange{}
	a := []byte("LimitRanger plugin set: cpu request for container web")
	first := c.annotationText(a)
	if first != string(a) {
		t.Fatalf("annotationText = %q", first)
	}
	if n := testing.AllocsPerRun(10, func() { _ = c.annotationText(a) }); n != 0 {
		t.Errorf("the same text again allocates %v times", n)
	}
	b := []byte("LimitRanger plugin set: cpu request for container api")
	if got := c.annotationText(b); got != string(b) {
		t.Errorf("annotationText of another text = %q", got)
	}
	a[len(a)-1] = 'x' // the caller's buffer changes; the string made from it must not
	if first != "LimitRanger plugin set: cpu request for container web" {
		t.Errorf("a returned string changed with the caller's buffer: %q", first)
	}
}

// TestDefaultsAreNotShared: a container without requests or limits gets
// lists of its own, filled from the LimitRange's defaults, whether they are
// copied whole (plain quantities) or quantity by quantity (one holding an
// arbitrary-precision decimal): changing one pod's lists, or their
// quantities, changes neither the LimitRange nor the next pod's.
func TestDefaultsAreNotShared(t *testing.T) {
	precise := resource.MustParse("0.1234567890123456789") // beyond int64 scaling: an inf.Dec inside
	for name, def := range map[string]corev1.ResourceList{
		"plain":   {corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		"decimal": {corev1.ResourceCPU: precise, corev1.ResourceMemory: resource.MustParse("256Mi")},
	} {
		t.Run(name, func(t *testing.T) {
			lr := limitRange(corev1.LimitTypeContainer, nil, nil, def, def, nil)
			want := lr.DeepCopy()
			p := New(cache{ranges: []*corev1.LimitRange{lr}}, Options{})
			admit := func() *corev1.Pod {
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "test"},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
				if err := p.Admit(t.Context(), admissiontest.Create(pod).Attributes()); err != nil {
					t.Fatal(err)
				}
				return pod
			}
			first := admit()
			r := &first.Spec.Containers[0].Resources
			for _, l := range []corev1.ResourceList{r.Limits, r.Requests} {
				if len(l) != 2 || !l.Cpu().Equal(def[corev1.ResourceCPU]) || !l.Memory().Equal(def[corev1.ResourceMemory]) {
					t.Fatalf("defaults set = %v, want %v", l, def)
				}
			}
			cpu := r.Limits[corev1.ResourceCPU]
			cpu.Add(resource.MustParse("1")) // changes an inf.Dec in place, if shared
			r.Limits[corev1.ResourceCPU] = cpu
			r.Requests[corev1.ResourceCPU] = cpu
			delete(r.Limits, corev1.ResourceMemory)
			r.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
			if !apiequality.Semantic.DeepEqual(lr, want) {
				t.Errorf("the LimitRange changed with the pod: %v", lr.Spec.Limits[0])
			}
			second := admit().Spec.Containers[0].Resources
			for _, l := range []corev1.ResourceList{second.Limits, second.Requests} {
				if len(l) != 2 || !l.Cpu().Equal(def[corev1.ResourceCPU]) || !l.Memory().Equal(def[corev1.ResourceMemory]) {
					t.Errorf("the next pod's defaults = %v, want %v", l, def)
				}
			}
		})
	}
}
