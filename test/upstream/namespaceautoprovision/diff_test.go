package namespaceautoprovision

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/namespace/autoprovision"

	"github.com/admitd/admitd/pkg/admission"
	ours "github.com/admitd/admitd/pkg/admission/plugins/namespaceautoprovision"
)

var nsResource = schema.GroupResource{Resource: "namespaces"}

// createError is the error creating a namespace of that name fails with,
// in both worlds.
func createError(name string) error {
	switch name {
	case "refused":
		return apierrors.NewForbidden(nsResource, name, errors.New("no"))
	case "failing":
		return apierrors.NewInternalError(errors.New("storage down"))
	case "racing":
		return apierrors.NewAlreadyExists(nsResource, name)
	case "invalid-":
		return apierrors.NewInvalid(schema.GroupKind{Kind: "Namespace"}, name, nil)
	}
	return nil
}

// world is admitd's side: namespaces that exist, created through the
// creator.
type world map[string]bool

func (w world) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	if !w[name] {
		return nil, apierrors.NewNotFound(nsResource, name)
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, nil
}

func (w world) CreateObject(_ context.Context, gvr schema.GroupVersionResource, ns string, obj runtime.Object) error {
	n := obj.(*corev1.Namespace)
	if gvr.Resource != "namespaces" || ns != "" || n.Namespace != "" || len(n.Labels)+len(n.Annotations) > 0 {
		return fmt.Errorf("unexpected create of %v %s/%s: %+v", gvr, ns, n.Name, n)
	}
	if err := createError(n.Name); err != nil {
		return err
	}
	if w[n.Name] {
		return apierrors.NewAlreadyExists(nsResource, n.Name)
	}
	w[n.Name] = true
	return nil
}

func (w world) names() []string {
	var out []string
	for n := range w {
		out = append(out, n)
	}
	slices.Sort(out)
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

var namespaces = []string{"live", "other", "new-a", "new-b", "new-c", "refused", "failing", "racing", "invalid-", ""}

type kind struct {
	gvk      schema.GroupVersionKind
	resource string
	obj      func(ns string) runtime.Object
}

var kinds = []kind{
	{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "configmaps", func(ns string) runtime.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns}}
	}},
	{schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, "pods", func(ns string) runtime.Object {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "123", Namespace: ns}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ctr", Image: "image"}}}}
	}},
	{schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "namespaces", func(ns string) runtime.Object {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	}},
	{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Namespace"}, "namespaces", func(ns string) runtime.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "not-core", Namespace: ns}}
	}},
}

func TestSameDecisions(t *testing.T) {
	client := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "live"}}, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}})
	client.PrependReactor("create", "namespaces", func(a clienttesting.Action) (bool, runtime.Object, error) {
		n := a.(clienttesting.CreateAction).GetObject().(*corev1.Namespace)
		if err := createError(n.Name); err != nil {
			return true, nil, err
		}
		return false, nil, nil
	})
	f := informers.NewSharedInformerFactory(client, 0)
	up := upstream.NewProvision()
	up.SetExternalKubeClientSet(client)
	up.SetExternalKubeInformerFactory(f)
	if err := up.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	ourWorld := world{"live": true, "other": true}
	our := ours.New(ourWorld, ourWorld)

	rnd := rand.New(rand.NewPCG(3, 37))
	outcomes := map[string]int{}
	const n = 600
	for i := range n {
		ns := namespaces[rnd.IntN(len(namespaces))]
		k := kinds[rnd.IntN(len(kinds))]
		op := []admission.Operation{admission.Create, admission.Create, admission.Create, admission.Update, admission.Delete, admission.Connect}[rnd.IntN(6)]
		dry := rnd.IntN(4) == 0
		obj := k.obj(ns)
		a := &admission.Attributes{Name: "x", Namespace: ns, Operation: op, Kind: k.gvk, DryRun: dry,
			Resource: schema.GroupVersionResource{Group: k.gvk.Group, Version: "v1", Resource: k.resource}, Object: obj, Record: admission.NewRecord()}
		if k.resource == "namespaces" {
			a.Namespace = "" // a namespace is cluster-scoped; its request names no namespace
			if rnd.IntN(2) == 0 {
				a.Namespace = ns // as a request in a namespace would
			}
		}
		internal, err := legacyscheme.Scheme.ConvertToVersion(obj.DeepCopyObject(), schema.GroupVersion{Version: runtime.APIVersionInternal})
		if err != nil {
			t.Fatal(err)
		}
		ua := upadmission.NewAttributesRecord(internal, nil, a.Kind, a.Namespace, a.Name, a.Resource, "", upadmission.Operation(op), nil, dry, nil)
		var got, want error
		if our.Handles(op) {
			got = our.Admit(context.Background(), a)
		}
		if up.Handles(ua.GetOperation()) {
			want = up.Admit(context.Background(), ua, nil)
		}
		name := fmt.Sprintf("%d: %s %s in %q (dry run %v)", i, op, k.gvk, a.Namespace, dry)
		if g, w := describe(got), describe(want); g != w {
			t.Errorf("%s:\n admitd   = %s\n upstream = %s", name, g, w)
		}
		outcomes[describe(want)]++
		list, err := client.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var upNames []string
		for _, n := range list.Items {
			upNames = append(upNames, n.Name)
		}
		slices.Sort(upNames)
		if !slices.Equal(ourWorld.names(), upNames) {
			t.Fatalf("%s: namespaces admitd %v, upstream %v", name, ourWorld.names(), upNames)
		}
	}
	t.Logf("%d generated requests, %d distinct outcomes, namespaces at the end: %v", n, len(outcomes), ourWorld.names())
	if len(outcomes) < 4 || len(ourWorld) < 5 {
		t.Errorf("generated requests reach too little: %v, namespaces %v", outcomes, ourWorld.names())
	}
}
