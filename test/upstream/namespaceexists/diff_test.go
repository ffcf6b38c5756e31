package namespaceexists

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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
	upstream "k8s.io/kubernetes/plugin/pkg/admission/namespace/exists"

	"github.com/admitd/admitd/pkg/admission"
	ours "github.com/admitd/admitd/pkg/admission/plugins/namespaceexists"
)

var nsResource = schema.GroupResource{Resource: "namespaces"}

var errBroken = errors.New("store unavailable")

// world is admitd's side: the namespaces that exist; "broken" cannot be
// read.
type world map[string]bool

func (w world) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	if name == "broken" {
		return nil, errBroken
	}
	if !w[name] {
		return nil, apierrors.NewNotFound(nsResource, name)
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, nil
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

var namespaces = []string{"live", "other", "gone", "missing", "broken", ""}

var kinds = []struct {
	gvk      schema.GroupVersionKind
	resource string
}{
	{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "configmaps"},
	{schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, "pods"},
	{schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "namespaces"},
	{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Namespace"}, "namespaces"},
}

func TestSameDecisions(t *testing.T) {
	client := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "live"}}, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}})
	client.PrependReactor("get", "namespaces", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.(clienttesting.GetAction).GetName() == "broken" {
			return true, nil, errBroken
		}
		return false, nil, nil
	})
	f := informers.NewSharedInformerFactory(client, 0)
	up := upstream.NewExists()
	up.SetExternalKubeClientSet(client)
	up.SetExternalKubeInformerFactory(f)
	if err := up.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	our := ours.New(world{"live": true, "other": true})

	rnd := rand.New(rand.NewPCG(4, 37))
	outcomes := map[string]int{}
	const n = 600
	for i := range n {
		ns := namespaces[rnd.IntN(len(namespaces))]
		k := kinds[rnd.IntN(len(kinds))]
		op := []admission.Operation{admission.Create, admission.Update, admission.Delete, admission.Connect}[rnd.IntN(4)]
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: ns}}
		a := &admission.Attributes{Name: "x", Namespace: ns, Operation: op, Kind: k.gvk,
			Resource: schema.GroupVersionResource{Group: k.gvk.Group, Version: "v1", Resource: k.resource}, Object: obj, Record: admission.NewRecord()}
		internal, err := legacyscheme.Scheme.ConvertToVersion(obj.DeepCopyObject(), schema.GroupVersion{Version: runtime.APIVersionInternal})
		if err != nil {
			t.Fatal(err)
		}
		ua := upadmission.NewAttributesRecord(internal, nil, a.Kind, a.Namespace, a.Name, a.Resource, "", upadmission.Operation(op), nil, false, nil)
		var got, want error
		if our.Handles(op) {
			got = our.Validate(context.Background(), a)
		}
		if up.Handles(ua.GetOperation()) {
			want = up.Validate(context.Background(), ua, nil)
		}
		if g, w := describe(got), describe(want); g != w {
			t.Errorf("%d: %s %s in %q:\n admitd   = %s\n upstream = %s", i, op, k.gvk, ns, g, w)
		}
		outcomes[describe(want)]++
	}
	t.Logf("%d generated requests, %d distinct outcomes", n, len(outcomes))
	if len(outcomes) < 4 {
		t.Errorf("only %d distinct outcomes: %v", len(outcomes), outcomes)
	}
}
