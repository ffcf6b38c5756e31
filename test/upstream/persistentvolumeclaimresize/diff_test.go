package persistentvolumeclaimresize

import (
	"context"
	"math/rand"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/storage/persistentvolume/resize"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	ours "github.com/admitd/admitd/pkg/admission/plugins/persistentvolumeclaimresize"
	"github.com/admitd/admitd/test/upstream/internal/plugindiff"
)

// cache is admitd's object cache over the classes upstream's lister holds.
type cache map[string]*storagev1.StorageClass

func (c cache) GetCachedObject(_ context.Context, gvr schema.GroupVersionResource, _, name string) (runtime.Object, error) {
	if sc, ok := c[name]; ok && gvr == storagev1.SchemeGroupVersion.WithResource("storageclasses") {
		return sc, nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (c cache) ListCachedObjects(context.Context, schema.GroupVersionResource, string, labels.Selector) ([]runtime.Object, error) {
	return nil, nil
}

func ptr[T any](v T) *T { return &v }

var classes = []*storagev1.StorageClass{
	{ObjectMeta: metav1.ObjectMeta{Name: "gold"}, Provisioner: "kubernetes.io/glusterfs", AllowVolumeExpansion: ptr(true)},
	{ObjectMeta: metav1.ObjectMeta{Name: "silver"}, Provisioner: "kubernetes.io/glusterfs", AllowVolumeExpansion: ptr(false)},
	{ObjectMeta: metav1.ObjectMeta{Name: "bronze"}, Provisioner: "kubernetes.io/glusterfs"},
}

func compareFunc(t testing.TB) func(*admission.Attributes) (plugindiff.Result, []string) {
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	idx := f.Storage().V1().StorageClasses().Informer().GetIndexer()
	c := cache{}
	for _, sc := range classes {
		c[sc.Name] = sc
		if err := idx.Add(sc); err != nil {
			t.Fatal(err)
		}
	}
	up, err := plugindiff.Upstream(upstream.Register, ours.Name, f)
	if err != nil {
		t.Fatal(err)
	}
	p := ours.New(c)
	return func(a *admission.Attributes) (plugindiff.Result, []string) { return plugindiff.Compare(p, up, a) }
}

func claim(size string, class *string, annotation *string, phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "foo", Namespace: "default"},
		Spec:   corev1.PersistentVolumeClaimSpec{VolumeName: "volume", StorageClassName: class},
		Status: corev1.PersistentVolumeClaimStatus{Phase: phase}}
	if size != "" {
		c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
		c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
	}
	if annotation != nil {
		c.Annotations = map[string]string{"volume.beta.kubernetes.io/storage-class": *annotation}
	}
	return c
}

// TestUpstreamTable is upstream's TestPVCResizeAdmission, each case through
// both.
func TestUpstreamTable(t *testing.T) {
	compare := compareFunc(t)
	const dynamic = "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"
	bound, pending := corev1.ClaimBound, corev1.ClaimPending
	for _, tc := range []struct {
		name     string
		old, obj *corev1.PersistentVolumeClaim
		want     string // a part of the error; "" for none
	}{
		{"pvc-resize, update, no error", claim("1Gi", ptr("gold"), nil, bound), claim("2Gi", ptr("gold"), nil, bound), ""},
		{"pvc-resize, update, dynamically provisioned error (no class)", claim("1Gi", nil, nil, bound), claim("2Gi", nil, nil, bound), dynamic},
		{"pvc-resize, update, dynamically provisioned error (silver)", claim("1Gi", ptr("silver"), nil, bound), claim("2Gi", ptr("silver"), nil, bound), dynamic},
		{"PVC update with no change in size", claim("1Gi", ptr("silver"), nil, bound), claim("1Gi", ptr("silver"), nil, pending), ""},
		{"expand pvc in pending state", claim("1Gi", ptr("silver"), nil, pending), claim("2Gi", ptr("silver"), nil, pending),
			"Only bound persistent volume claims can be expanded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, diffs := compare(admissiontest.Update(tc.obj, tc.old).Attributes())
			for _, d := range diffs {
				t.Error(d)
			}
			if (u.Err == nil) != (tc.want == "") || (u.Err != nil && !strings.Contains(u.Err.Error(), tc.want)) {
				t.Errorf("upstream: %v, want %q", u.Err, tc.want)
			}
		})
	}
}

var (
	sizes       = []string{"", "500Mi", "1Gi", "1024Mi", "1073741824", "2Gi", "1.5Gi"}
	classNames  = []*string{nil, ptr(""), ptr("gold"), ptr("gold"), ptr("silver"), ptr("bronze"), ptr("missing")}
	betaClasses = []*string{nil, nil, nil, ptr(""), ptr("gold"), ptr("silver")}
	phases      = []corev1.PersistentVolumeClaimPhase{corev1.ClaimBound, corev1.ClaimBound, corev1.ClaimPending, corev1.ClaimLost, ""}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.Intn(len(xs))] }

// TestGenerated compares random updates of claims.
func TestGenerated(t *testing.T) {
	compare := compareFunc(t)
	r := rand.New(rand.NewSource(23))
	const n = 3000
	pvcs := corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	outcomes := map[string]int{}
	for i := 0; i < n; i++ {
		oldClass := pick(r, classNames)
		newClass := oldClass
		if r.Intn(4) == 0 {
			newClass = pick(r, classNames)
		}
		oldBeta := pick(r, betaClasses)
		newBeta := oldBeta
		if r.Intn(4) == 0 {
			newBeta = pick(r, betaClasses)
		}
		old := claim(pick(r, sizes), oldClass, oldBeta, pick(r, phases))
		obj := claim(pick(r, sizes), newClass, newBeta, pick(r, phases))
		b := admissiontest.Update(obj, old)
		switch r.Intn(12) {
		case 0:
			b = b.Resource(pvcs, "status")
		case 1:
			b = admissiontest.Create(obj)
		case 2:
			b = admissiontest.Update(&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"}}, old).Resource(pvcs, "")
		}
		u, diffs := compare(b.Attributes())
		for _, d := range diffs {
			t.Errorf("update %d: %s", i, d)
		}
		outcomes[u.Describe()]++
	}
	t.Logf("%d requests compared, outcomes: %v", n, outcomes)
	if len(outcomes) != 3 {
		t.Errorf("%d distinct outcomes, want 3: the generator no longer reaches the plugin", len(outcomes))
	}
}
