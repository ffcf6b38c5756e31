package noderestriction

import (
	"context"
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/authentication/install"
	_ "k8s.io/kubernetes/pkg/apis/certificates/install"
	_ "k8s.io/kubernetes/pkg/apis/coordination/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	"k8s.io/kubernetes/pkg/auth/nodeidentifier"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/noderestriction"

	"github.com/admitd/admitd/pkg/admission"
	ours "github.com/admitd/admitd/pkg/admission/plugins/noderestriction"
)

// world is the cluster state both plugins read.
type world struct {
	nodes    []*corev1.Node
	pods     []*corev1.Pod
	sas      []*corev1.ServiceAccount
	pvcs     []*corev1.PersistentVolumeClaim
	pvs      []*corev1.PersistentVolume
	drivers  []*storagev1.CSIDriver
	objects  map[string]runtime.Object // by resource/namespace/name
	upstream *upstream.Plugin
	ours     *ours.Plugin
}

func key(resource, namespace, name string) string { return resource + "/" + namespace + "/" + name }

// GetObject is admitd's ObjectLookup over the world.
func (w *world) GetObject(_ context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	if o, ok := w.objects[key(gvr.Resource, namespace, name)]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (w *world) build(t testing.TB) {
	w.objects = map[string]runtime.Object{}
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	put := func(idx cacheIndexer, resource string, obj runtime.Object) {
		m, _ := meta.Accessor(obj)
		w.objects[key(resource, m.GetNamespace(), m.GetName())] = obj
		if err := idx.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range w.nodes {
		put(f.Core().V1().Nodes().Informer().GetIndexer(), "nodes", o)
	}
	for _, o := range w.pods {
		put(f.Core().V1().Pods().Informer().GetIndexer(), "pods", o)
	}
	for _, o := range w.sas {
		put(f.Core().V1().ServiceAccounts().Informer().GetIndexer(), "serviceaccounts", o)
	}
	for _, o := range w.pvcs {
		put(f.Core().V1().PersistentVolumeClaims().Informer().GetIndexer(), "persistentvolumeclaims", o)
	}
	for _, o := range w.pvs {
		put(f.Core().V1().PersistentVolumes().Informer().GetIndexer(), "persistentvolumes", o)
	}
	for _, o := range w.drivers {
		put(f.Storage().V1().CSIDrivers().Informer().GetIndexer(), "csidrivers", o)
	}
	p := upstream.NewPlugin(nodeidentifier.NewDefaultNodeIdentifier())
	p.InspectFeatureGates(utilfeature.DefaultFeatureGate)
	p.SetExternalKubeInformerFactory(f)
	p.SetUnconditionalAuthorizer(upstreamAuthz{})
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	w.upstream = p
	w.ours = ours.New(w, admission.AuthorizerFunc(ourAuthz))
}

type cacheIndexer interface{ Add(obj any) error }

// The authorizer both plugins ask: it allows the audience and signer
// "allowed", fails for "error" and denies the rest.
func decide(resource string) (bool, error) {
	switch resource {
	case "allowed", "example.com:allowed":
		return true, nil
	case "error", "example.com:error":
		return false, errors.New("authorizer failed")
	}
	return false, nil
}

type upstreamAuthz struct{}

func (upstreamAuthz) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	ok, err := decide(a.GetResource())
	if ok {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", err
}

func ourAuthz(_ context.Context, a admission.AuthorizationAttributes) (admission.AuthorizationDecision, string, error) {
	ok, err := decide(a.Resource)
	if ok {
		return admission.AuthorizationAllow, "", nil
	}
	return admission.AuthorizationNoOpinion, "", err
}

// toInternal converts a v1 object to upstream's internal type, as
// kube-apiserver decodes it.
func toInternal(t testing.TB, obj runtime.Object) runtime.Object {
	if obj == nil {
		return nil
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Empty() {
		kinds, _, err := legacyscheme.Scheme.ObjectKinds(obj)
		if err != nil {
			t.Fatal(err)
		}
		gvk = kinds[0]
	}
	out, err := legacyscheme.Scheme.ConvertToVersion(obj.DeepCopyObject(), schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal})
	if err != nil {
		t.Fatalf("converting %v: %v", gvk, err)
	}
	return out
}

// compare sends a through both plugins and returns upstream's outcome.
func (w *world) compare(t *testing.T, name string, a *admission.Attributes) string {
	t.Helper()
	ourErr := w.ours.Admit(context.Background(), a)
	u := a.UserInfo
	info := &user.DefaultInfo{Name: u.Username, Groups: u.Groups}
	ua := upadmission.NewAttributesRecord(toInternal(t, a.Object), toInternal(t, a.OldObject), a.Kind, a.Namespace, a.Name,
		a.Resource, a.Subresource, upadmission.Operation(a.Operation), a.Options, a.DryRun, info)
	upErr := w.upstream.Admit(context.Background(), ua, nil)
	if got, want := describe(ourErr), describe(upErr); got != want {
		t.Errorf("%s: admitd = %s\n upstream = %s", name, got, want)
	}
	return describe(upErr)
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
