package standard_test

import (
	"context"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	"github.com/admitd/admitd/pkg/admission/plugins/standard"
	"github.com/admitd/admitd/pkg/features"
)

// scopedRequests are the resources the scoped plugins look at and others,
// each with an object of its kind.
var scopedRequests = []struct {
	gvr schema.GroupVersionResource
	obj runtime.Object
}{
	{corev1.SchemeGroupVersion.WithResource("pods"), &corev1.Pod{Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c"}}}}},
	{corev1.SchemeGroupVersion.WithResource("nodes"), &corev1.Node{}},
	{corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), &corev1.PersistentVolumeClaim{}},
	{corev1.SchemeGroupVersion.WithResource("persistentvolumes"), &corev1.PersistentVolume{}},
	{corev1.SchemeGroupVersion.WithResource("configmaps"), &corev1.ConfigMap{}},
	{corev1.SchemeGroupVersion.WithResource("services"), &corev1.Service{}},
	{storagev1.SchemeGroupVersion.WithResource("volumeattributesclasses"), &storagev1.VolumeAttributesClass{}},
	{certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"), &certificatesv1.CertificateSigningRequest{
		Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: "kubernetes.io/kube-apiserver-client"}}},
	{certificatesv1beta1.SchemeGroupVersion.WithResource("clustertrustbundles"), &certificatesv1beta1.ClusterTrustBundle{}},
	{networkingv1.SchemeGroupVersion.WithResource("ingresses"), &networkingv1.Ingress{}},
	{resourcev1.SchemeGroupVersion.WithResource("resourceslices"), &resourcev1.ResourceSlice{}},
	{schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1alpha2", Resource: "podgroups"}, &corev1.Pod{}},
}

// TestScopedPluginsIgnoreWhatTheyDoNotConcern: the chain does not call a
// Scoped plugin on a request it says it does not look at, so on every such
// request (the resources above, each subresource and operation, objects of
// the right kind, with the gates at their defaults and all on) its Admit and
// Validate must return nil and leave the objects as they were.
func TestScopedPluginsIgnoreWhatTheyDoNotConcern(t *testing.T) {
	allOn := features.New()
	if err := allOn.Set("AllAlpha=true,AllBeta=true"); err != nil {
		t.Fatal(err)
	}
	scoped := map[string]bool{}
	for _, gates := range []*features.Gates{features.New(), allOn} {
		for _, name := range all {
			p := buildPlugin(t, name, gates)
			s, ok := p.(admission.Scoped)
			if !ok {
				continue
			}
			scoped[name] = true
			checkIgnores(t, name, p, s)
		}
	}
	if len(scoped) < 12 {
		t.Fatalf("only %d scoped plugins built: %v", len(scoped), scoped)
	}
}

// buildPlugin builds the named plugin alone over an empty cluster, or
// returns nil when it needs configuration to build.
func buildPlugin(t *testing.T, name string, gates *features.Gates) admission.Handler {
	t.Helper()
	pc := admissiontest.NewCluster().Plugins(admission.PluginContext{Context: t.Context(), Features: gates,
		Authorizer: admission.AuthorizerFunc(func(context.Context, admission.AuthorizationAttributes) (admission.AuthorizationDecision, string, error) {
			return admission.AuthorizationDeny, "", nil
		})})
	chain, err := standard.NewRegistry(standard.Options{}).NewChain([]string{name}, pc, nil)
	if err != nil {
		return nil
	}
	return chain.Plugins()[0].Plugin
}

func checkIgnores(t *testing.T, name string, p admission.Handler, s admission.Scoped) {
	t.Helper()
	ctx := t.Context()
	for _, req := range scopedRequests {
		for _, sub := range []string{"", "status", "approval", "resize", "binding"} {
			for _, op := range []admission.Operation{admission.Create, admission.Update, admission.Delete, admission.Connect} {
				obj, old := req.obj.DeepCopyObject(), req.obj.DeepCopyObject()
				a := &admission.Attributes{Name: "x", Namespace: "ns", Resource: req.gvr, Subresource: sub, Operation: op,
					Kind: req.gvr.GroupVersion().WithKind("Any"), Object: obj, OldObject: old, Options: &metav1.CreateOptions{},
					Record: admission.NewRecord()}
				if s.Concerns(a) || !p.Handles(op) {
					continue
				}
				if m, ok := p.(admission.Mutator); ok {
					if err := m.Admit(ctx, a); err != nil {
						t.Errorf("%s Admit %s %s/%s: %v, though it does not concern it", name, op, req.gvr.Resource, sub, err)
					}
				}
				if v, ok := p.(admission.Validator); ok {
					if err := v.Validate(ctx, a); err != nil {
						t.Errorf("%s Validate %s %s/%s: %v, though it does not concern it", name, op, req.gvr.Resource, sub, err)
					}
				}
				if !equality.Semantic.DeepEqual(obj, req.obj) || !equality.Semantic.DeepEqual(old, req.obj) {
					t.Errorf("%s changed the object of %s %s/%s, though it does not concern it", name, op, req.gvr.Resource, sub)
				}
				if len(a.Record.Annotations(admission.LevelRequestResponse)) > 0 || len(a.Record.Warnings()) > 0 {
					t.Errorf("%s annotated %s %s/%s, though it does not concern it", name, op, req.gvr.Resource, sub)
				}
			}
		}
	}
}
