package defaultstorageclass

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/storage/storageclass/setdefault"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	ours "github.com/admitd/admitd/pkg/admission/plugins/defaultstorageclass"
	"github.com/admitd/admitd/test/upstream/internal/plugindiff"
)

// cache is admitd's object cache over the same classes upstream's lister
// holds.
type cache []*storagev1.StorageClass

func (c cache) GetCachedObject(context.Context, schema.GroupVersionResource, string, string) (runtime.Object, error) {
	return nil, fmt.Errorf("unexpected get")
}

func (c cache) ListCachedObjects(_ context.Context, gvr schema.GroupVersionResource, _ string, _ labels.Selector) ([]runtime.Object, error) {
	if gvr.Resource != "storageclasses" {
		return nil, fmt.Errorf("unexpected list of %v", gvr)
	}
	out := make([]runtime.Object, len(c))
	for i, sc := range c {
		out[i] = sc
	}
	return out, nil
}

// pair builds both plugins over classes.
func pair(t testing.TB, classes []*storagev1.StorageClass) (admission.Handler, func(*admission.Attributes) (plugindiff.Result, []string)) {
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	idx := f.Storage().V1().StorageClasses().Informer().GetIndexer()
	for _, sc := range classes {
		if err := idx.Add(sc); err != nil {
			t.Fatal(err)
		}
	}
	up, err := plugindiff.Upstream(upstream.Register, ours.Name, f)
	if err != nil {
		t.Fatal(err)
	}
	p := ours.New(cache(classes))
	return p, func(a *admission.Attributes) (plugindiff.Result, []string) { return plugindiff.Compare(p, up, a) }
}

var t0 = time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)

func class(name string, created time.Time, annotations map[string]string) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created), Annotations: annotations},
		Provisioner: "example.com/" + name}
}

func claim(name, generateName string, class *string, annotations map[string]string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, GenerateName: generateName, Namespace: "ns", Annotations: annotations},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: class, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			VolumeMode: ptr(corev1.PersistentVolumeFilesystem)},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
}

func ptr[T any](v T) *T { return &v }

// TestUpstreamTable is upstream's TestAdmission, each case through both.
func TestUpstreamTable(t *testing.T) {
	def := map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
	default1, default2 := class("default1", time.Time{}, def), class("default2", time.Time{}, def)
	falseDef := class("nondefault1", time.Time{}, map[string]string{"storageclass.kubernetes.io/is-default-class": "false"})
	noDef := class("nondefault2", time.Time{}, nil)
	emptyDef := class("nondefault2", time.Time{}, map[string]string{"storageclass.kubernetes.io/is-default-class": ""})
	created1 := class("default1", time.Date(2022, 1, 1, 0, 0, 0, 1, time.UTC), def)
	created2 := class("default2", time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), def)
	withClass := claim("claimWithClass", "", ptr("foo"), nil)
	withEmpty := claim("claimWithEmptyClass", "", ptr(""), nil)
	withNone := claim("claimWithNoClass", "", nil, nil)
	for _, tc := range []struct {
		name    string
		classes []*storagev1.StorageClass
		claim   *corev1.PersistentVolumeClaim
		want    string
	}{
		{"no default, no modification of PVCs", []*storagev1.StorageClass{falseDef, noDef, emptyDef}, withNone, ""},
		{"one default, modify PVC with class=nil", []*storagev1.StorageClass{default1, falseDef, noDef, emptyDef}, withNone, "default1"},
		{"one default, no modification of PVC with class=''", []*storagev1.StorageClass{default1, falseDef, noDef, emptyDef}, withEmpty, ""},
		{"one default, no modification of PVC with class='foo'", []*storagev1.StorageClass{default1, falseDef, noDef, emptyDef}, withClass, "foo"},
		{"two defaults, no modification of PVC with class=''", []*storagev1.StorageClass{default1, default2, falseDef, noDef, emptyDef}, withEmpty, ""},
		{"two defaults, no modification of PVC with class='foo'", []*storagev1.StorageClass{default1, default2, falseDef, noDef, emptyDef}, withClass, "foo"},
		{"two defaults with same creation time, choose the one with smaller name", []*storagev1.StorageClass{default1, default2, falseDef, noDef, emptyDef}, withNone, "default1"},
		{"two defaults, choose the one with newer creation time", []*storagev1.StorageClass{created1, created2, falseDef, noDef, emptyDef}, withNone, "default1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, compare := pair(t, tc.classes)
			a := admissiontest.Create(tc.claim).Attributes()
			u, diffs := compare(a)
			for _, d := range diffs {
				t.Error(d)
			}
			got := ""
			if c := u.Object.(*corev1.PersistentVolumeClaim).Spec.StorageClassName; c != nil {
				got = *c
			}
			if u.Err != nil || got != tc.want {
				t.Errorf("upstream: class %q, error %v; want class %q", got, u.Err, tc.want)
			}
		})
	}
}

// Vocabularies of the generated cases.
var (
	classNames  = []string{"a", "b", "c", "d", "gold"}
	times       = []time.Time{{}, t0, t0.Add(time.Nanosecond), t0.Add(time.Second), t0.Add(time.Hour)}
	annotations = []map[string]string{
		nil,
		{"storageclass.kubernetes.io/is-default-class": "true"},
		{"storageclass.kubernetes.io/is-default-class": "false"},
		{"storageclass.kubernetes.io/is-default-class": ""},
		{"storageclass.kubernetes.io/is-default-class": "True"},
		{"storageclass.beta.kubernetes.io/is-default-class": "true"},
		{"storageclass.beta.kubernetes.io/is-default-class": "false"},
		{"storageclass.kubernetes.io/is-default-class": "false", "storageclass.beta.kubernetes.io/is-default-class": "true"},
		{"other": "true"},
	}
	claimClasses     = []*string{nil, nil, nil, ptr(""), ptr("gold"), ptr("missing")}
	claimAnnotations = []map[string]string{nil, nil, {"volume.beta.kubernetes.io/storage-class": ""},
		{"volume.beta.kubernetes.io/storage-class": "gold"}, {"volume.beta.kubernetes.io/storage-class-other": "x"}}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.Intn(len(xs))] }

// TestGenerated compares random class sets and claims.
func TestGenerated(t *testing.T) {
	r := rand.New(rand.NewSource(19))
	const worlds, claimsPerWorld = 300, 8
	outcomes := map[string]int{}
	for w := 0; w < worlds; w++ {
		var classes []*storagev1.StorageClass
		for _, i := range r.Perm(len(classNames))[:r.Intn(len(classNames)+1)] {
			classes = append(classes, class(classNames[i], pick(r, times), pick(r, annotations)))
		}
		_, compare := pair(t, classes)
		for c := 0; c < claimsPerWorld; c++ {
			name, gen := "c", ""
			if r.Intn(4) == 0 {
				name, gen = "", "c-"
			}
			pvc := claim(name, gen, pick(r, claimClasses), pick(r, claimAnnotations))
			b := admissiontest.Create(pvc)
			switch r.Intn(8) {
			case 0:
				b = admissiontest.Update(pvc, claim(name, gen, nil, nil))
			case 1:
				b = b.Resource(corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), "status")
			case 2:
				b = admissiontest.Create(&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"}})
			}
			u, diffs := compare(b.Attributes())
			for _, d := range diffs {
				t.Errorf("world %d claim %d: %s", w, c, d)
			}
			key := u.Describe()
			if pvc, ok := u.Object.(*corev1.PersistentVolumeClaim); ok && pvc.Spec.StorageClassName != nil {
				key += " class=" + *pvc.Spec.StorageClassName
			}
			outcomes[key]++
		}
	}
	t.Logf("%d requests compared, outcomes: %v", worlds*claimsPerWorld, outcomes)
	if len(outcomes) < 6 {
		t.Errorf("%d distinct outcomes, want at least 6: the generator no longer reaches the plugin", len(outcomes))
	}
}
