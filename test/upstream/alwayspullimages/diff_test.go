package alwayspullimages

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/diff"
	upadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/alwayspullimages"

	"github.com/admitd/admitd/pkg/admission"
	ours "github.com/admitd/admitd/pkg/admission/plugins/alwayspullimages"
)

type request struct {
	name        string
	op          admission.Operation
	kind        string
	resource    string
	subresource string
	obj, old    runtime.Object
}

func (r request) attributes() *admission.Attributes {
	return &admission.Attributes{Name: "p", Namespace: "ns", Operation: r.op,
		Kind:     schema.GroupVersionKind{Version: "v1", Kind: r.kind},
		Resource: schema.GroupVersionResource{Version: "v1", Resource: r.resource}, Subresource: r.subresource,
		Object: deepCopy(r.obj), OldObject: deepCopy(r.old), Record: admission.NewRecord()}
}

func deepCopy(o runtime.Object) runtime.Object {
	if o == nil {
		return nil
	}
	return o.DeepCopyObject()
}

func toInternal(t testing.TB, obj runtime.Object) runtime.Object {
	if obj == nil {
		return nil
	}
	out, err := legacyscheme.Scheme.ConvertToVersion(obj.DeepCopyObject(), schema.GroupVersion{Version: runtime.APIVersionInternal})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func toV1(t testing.TB, obj runtime.Object) runtime.Object {
	out, err := legacyscheme.Scheme.ConvertToVersion(obj, corev1.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	out.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return out
}

func describe(err error) string {
	if err == nil {
		return "admitted"
	}
	var code int32
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		code = st.Status().Code
	}
	return fmt.Sprintf("%d %q", code, err.Error())
}

// compare runs r through both plugins: Admit and the object it leaves,
// then Validate of that object, and Validate of the request as sent (as if
// something after the mutating phase had changed the policies back).
func compare(t *testing.T, r request, outcomes map[string]int) {
	t.Helper()
	up := upstream.NewAlwaysPullImages()
	our := ours.Plugin{}
	if up.Handles(upadmission.Operation(r.op)) != our.Handles(r.op) {
		t.Fatalf("%s: Handles(%s) differs", r.name, r.op)
	}
	upAttrs := func() (upadmission.Attributes, runtime.Object) {
		a := r.attributes()
		obj := toInternal(t, a.Object)
		return upadmission.NewAttributesRecord(obj, toInternal(t, a.OldObject), a.Kind, a.Namespace, a.Name, a.Resource, a.Subresource,
			upadmission.Operation(a.Operation), nil, false, nil), obj
	}
	// mutating then validating phase
	a := r.attributes()
	ua, uobj := upAttrs()
	gotErr, wantErr := our.Admit(context.Background(), a), up.Admit(context.Background(), ua, nil)
	if gotErr == nil {
		gotErr = our.Validate(context.Background(), a)
	}
	if wantErr == nil {
		wantErr = up.Validate(context.Background(), ua, nil)
	}
	if g, w := describe(gotErr), describe(wantErr); g != w {
		t.Errorf("%s: admit+validate\n admitd   = %s\n upstream = %s", r.name, g, w)
	}
	if _, isPod := uobj.(interface{ GetObjectKind() schema.ObjectKind }); isPod && r.obj != nil {
		if want := toV1(t, uobj); !equality.Semantic.DeepEqual(a.Object, want) {
			t.Errorf("%s: object (-admitd +upstream):\n%s", r.name, diff.Diff(a.Object, want))
		}
	}
	// validating phase alone
	a = r.attributes()
	ua, _ = upAttrs()
	g, w := describe(our.Validate(context.Background(), a)), describe(up.Validate(context.Background(), ua, nil))
	if g != w {
		t.Errorf("%s: validate\n admitd   = %s\n upstream = %s", r.name, g, w)
	}
	outcomes[w]++
}

func container(name, image string, policy corev1.PullPolicy) corev1.Container {
	return corev1.Container{Name: name, Image: image, ImagePullPolicy: policy}
}

var policies = []corev1.PullPolicy{"", corev1.PullNever, corev1.PullIfNotPresent, corev1.PullAlways}

// upstreamPod is the pod of upstream's TestAdmission and TestValidate.
func upstreamPod() *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "123", Namespace: "test"}}
	for i, pol := range policies {
		p.Spec.InitContainers = append(p.Spec.InitContainers, container(fmt.Sprintf("init%d", i+1), "image", pol))
		p.Spec.Containers = append(p.Spec.Containers, container(fmt.Sprintf("ctr%d", i+1), "image", pol))
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: fmt.Sprintf("volume%d", i+1),
			VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "image", PullPolicy: pol}}})
	}
	return p
}

var images = []string{"a", "b", "c", "a:1", "busybox"}

func genPod(r *rand.Rand) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
	pick := func() (string, corev1.PullPolicy) {
		return images[r.IntN(len(images))], policies[r.IntN(len(policies))]
	}
	for i := range r.IntN(3) {
		img, pol := pick()
		p.Spec.InitContainers = append(p.Spec.InitContainers, container(fmt.Sprintf("i%d", i), img, pol))
	}
	for i := range 1 + r.IntN(3) {
		img, pol := pick()
		p.Spec.Containers = append(p.Spec.Containers, container(fmt.Sprintf("c%d", i), img, pol))
	}
	for i := range r.IntN(2) {
		img, pol := pick()
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: fmt.Sprintf("e%d", i), Image: img, ImagePullPolicy: pol}})
	}
	for i := range r.IntN(3) {
		v := corev1.Volume{Name: fmt.Sprintf("v%d", i), VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
		if r.IntN(2) == 0 {
			img, pol := pick()
			v.VolumeSource = corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: img, PullPolicy: pol}}
		}
		p.Spec.Volumes = append(p.Spec.Volumes, v)
	}
	return p
}

func TestSameOutcomes(t *testing.T) {
	outcomes := map[string]int{}
	pod := upstreamPod()
	never := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "testname", Namespace: "testnamespace"}, Spec: corev1.PodSpec{Containers: []corev1.Container{container("ctr2", "image", corev1.PullNever)}}}
	for _, r := range []request{
		{name: "TestAdmission", op: admission.Create, kind: "Pod", resource: "pods", obj: pod},
		{name: "TestValidate", op: admission.Create, kind: "Pod", resource: "pods", obj: pod},
		{name: "non-pod resource", op: admission.Create, kind: "Foo", resource: "foos", obj: never},
		{name: "pod subresource", op: admission.Create, kind: "Pod", resource: "pods", subresource: "exec", obj: never},
		{name: "non-pod object", op: admission.Create, kind: "Pod", resource: "pods", obj: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}},
		{name: "update, old not a pod", op: admission.Update, kind: "Pod", resource: "pods", obj: never, old: &corev1.Service{}},
		{name: "update, no new image", op: admission.Update, kind: "Pod", resource: "pods", obj: never, old: never},
		{name: "update, new image", op: admission.Update, kind: "Pod", resource: "pods", obj: pod, old: never},
	} {
		compare(t, r, outcomes)
	}
	rnd := rand.New(rand.NewPCG(10, 37))
	const n = 2000
	for i := range n {
		r := request{name: fmt.Sprintf("generated %d", i), op: admission.Create, kind: "Pod", resource: "pods", obj: genPod(rnd)}
		switch k := rnd.IntN(10); {
		case k < 4:
		case k < 8:
			r.op, r.old = admission.Update, genPod(rnd)
			if rnd.IntN(2) == 0 { // the same images, other policies
				old := r.obj.DeepCopyObject().(*corev1.Pod)
				for j := range old.Spec.Containers {
					old.Spec.Containers[j].ImagePullPolicy = corev1.PullNever
				}
				r.old = old
			}
		case k < 9:
			r.subresource = []string{"status", "ephemeralcontainers", "binding"}[rnd.IntN(3)]
			r.op, r.old = admission.Update, genPod(rnd)
		default:
			r.kind, r.resource = "Widget", "widgets"
		}
		compare(t, r, outcomes)
	}
	t.Logf("%d generated requests, %d distinct validation outcomes", n, len(outcomes))
	if len(outcomes) < 50 {
		t.Errorf("only %d distinct outcomes", len(outcomes))
	}
}
