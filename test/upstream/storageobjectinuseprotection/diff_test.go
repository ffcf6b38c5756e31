package storageobjectinuseprotection

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagev1beta1 "k8s.io/api/storage/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/storage/storageobjectinuseprotection"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	ours "github.com/admitd/admitd/pkg/admission/plugins/storageobjectinuseprotection"
	"github.com/admitd/admitd/test/upstream/internal/plugindiff"
)

func plugins(t testing.TB) (admission.Handler, upadmission.Interface) {
	up, err := plugindiff.Upstream(upstream.Register, ours.Name, informers.NewSharedInformerFactory(fake.NewClientset(), 0))
	if err != nil {
		t.Fatal(err)
	}
	return ours.New(), up
}

func objMeta(name, namespace string, finalizers []string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Finalizers: finalizers}
}

func pv(f ...string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: objMeta("pv", "", f),
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain}}
}

func pvc(f ...string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: objMeta("claim", "ns", f)}
}

func vac(f ...string) *storagev1.VolumeAttributesClass {
	return &storagev1.VolumeAttributesClass{ObjectMeta: objMeta("vac", "", f), DriverName: "example.com/csi"}
}

func vacBeta(f ...string) *storagev1beta1.VolumeAttributesClass {
	return &storagev1beta1.VolumeAttributesClass{ObjectMeta: objMeta("vac", "", f), DriverName: "example.com/csi"}
}

// TestUpstreamTable is upstream's TestAdmit, each case through both.
func TestUpstreamTable(t *testing.T) {
	p, up := plugins(t)
	pvcs := corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	for _, tc := range []struct {
		name string
		b    *admissiontest.Builder
		want []string
	}{
		{"create -> add PVC finalizer", admissiontest.Create(pvc()), []string{ours.PVCProtectionFinalizer}},
		{"create -> finalizer is already present", admissiontest.Create(pvc(ours.PVCProtectionFinalizer)), []string{ours.PVCProtectionFinalizer}},
		{"create -> add PV finalizer", admissiontest.Create(pv()), []string{ours.PVProtectionFinalizer}},
		{"create -> PV finalizer is already present", admissiontest.Create(pv(ours.PVProtectionFinalizer)), []string{ours.PVProtectionFinalizer}},
		{"create -> add VAC finalizer", admissiontest.Create(vac()), []string{ours.VACProtectionFinalizer}},
		{"create -> VAC finalizer is already present", admissiontest.Create(vac(ours.VACProtectionFinalizer)), []string{ours.VACProtectionFinalizer}},
		{"create -> ignore unknown objects", admissiontest.Create(&corev1.Pod{ObjectMeta: objMeta("pod", "ns", nil)}), nil},
		{"create -> ignore subresource", admissiontest.Create(pvc()).Resource(pvcs, "status"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, diffs := plugindiff.Compare(p, up, tc.b.Attributes())
			for _, d := range diffs {
				t.Error(d)
			}
			m, err := meta.Accessor(u.Object)
			if u.Err != nil || err != nil || !slices.Equal(m.GetFinalizers(), tc.want) {
				t.Errorf("upstream: %v, %v; want finalizers %v", u.Object, u.Err, tc.want)
			}
		})
	}
}

var finalizers = []string{ours.PVProtectionFinalizer, ours.PVCProtectionFinalizer, ours.VACProtectionFinalizer,
	"kubernetes.io/pvc-protection-other", "example.com/f", "foregroundDeletion"}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.Intn(len(xs))] }

func someFinalizers(r *rand.Rand) []string {
	var out []string
	for i := r.Intn(4); i > 0; i-- {
		out = append(out, pick(r, finalizers))
	}
	return out
}

// TestGenerated compares random objects with random finalizers.
func TestGenerated(t *testing.T) {
	p, up := plugins(t)
	r := rand.New(rand.NewSource(20))
	pvs := corev1.SchemeGroupVersion.WithResource("persistentvolumes")
	pvcs := corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	const n = 3000
	outcomes := map[string]int{}
	for i := 0; i < n; i++ {
		objs := []runtime.Object{pv(someFinalizers(r)...), pvc(someFinalizers(r)...), vac(someFinalizers(r)...),
			vacBeta(someFinalizers(r)...), &corev1.ConfigMap{ObjectMeta: objMeta("cm", "ns", someFinalizers(r))}}
		obj := pick(r, objs)
		b := admissiontest.Create(obj)
		switch r.Intn(10) {
		case 0:
			b = admissiontest.Update(obj, obj.DeepCopyObject())
		case 1:
			b = b.Resource(pick(r, []schema.GroupVersionResource{pvs, pvcs}), "status")
		case 2:
			// a core object under the other core resource
			if _, isVAC := obj.(*storagev1.VolumeAttributesClass); !isVAC {
				if _, isBeta := obj.(*storagev1beta1.VolumeAttributesClass); !isBeta {
					b = b.Resource(pick(r, []schema.GroupVersionResource{pvs, pvcs}), "")
				}
			}
		}
		u, diffs := plugindiff.Compare(p, up, b.Attributes())
		for _, d := range diffs {
			t.Errorf("request %d: %s", i, d)
		}
		m, _ := meta.Accessor(u.Object)
		outcomes[fmt.Sprintf("%s %T %q", u.Describe(), u.Object, m.GetFinalizers())]++
	}
	t.Logf("%d requests compared, %d distinct outcomes", n, len(outcomes))
	if len(outcomes) < 20 {
		t.Errorf("%d distinct outcomes, want at least 20: the generator no longer reaches the plugin", len(outcomes))
	}
}
