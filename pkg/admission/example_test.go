package admission_test

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/standard"
)

// denyLatestTag is a plugin of the library user's own: it rejects Pods whose
// containers use an image's "latest" tag.
type denyLatestTag struct{}

var _ admission.Validator = denyLatestTag{}

func (denyLatestTag) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

func (denyLatestTag) Validate(_ context.Context, a *admission.Attributes) error {
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	for _, c := range pod.Spec.Containers {
		if strings.HasSuffix(c.Image, ":latest") {
			return admission.NewForbidden(a, fmt.Errorf("container %q: the latest tag is not allowed", c.Name))
		}
	}
	return nil
}

// namespaces is a NamespaceLookup over a fixed set of namespaces.
type namespaces map[string]*corev1.Namespace

func (n namespaces) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	if ns, ok := n[name]; ok {
		return ns, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
}

// noObjects is an ObjectCache of an empty cluster.
type noObjects struct{}

func (noObjects) GetCachedObject(_ context.Context, gvr schema.GroupVersionResource, _, name string) (runtime.Object, error) {
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (noObjects) ListCachedObjects(context.Context, schema.GroupVersionResource, string, labels.Selector) ([]runtime.Object, error) {
	return nil, nil
}

func podCreate(namespace, image string) *admission.Attributes {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: namespace},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}}},
	}
	return &admission.Attributes{
		Name: "web", Namespace: namespace, Operation: admission.Create,
		Resource: corev1.SchemeGroupVersion.WithResource("pods"), Kind: corev1.SchemeGroupVersion.WithKind("Pod"),
		Object: pod, Record: admission.NewRecord(),
	}
}

// A plugin of one's own, under a name kube-apiserver does not have, runs in a
// chain with the standard plugins: NamespaceLifecycle refuses Pods in a
// namespace that does not exist, DenyLatestTag refuses the latest tag.
// LimitRanger, which reads LimitRanges from a cache this example does not
// have, and ResourceQuota, which writes quota status through the server,
// are disabled.
func Example_ownPlugin() {
	r := standard.NewRegistry(standard.Options{})
	r.RegisterBefore("DenyLatestTag", "ValidatingAdmissionWebhook", func(admission.PluginContext) (admission.Handler, error) {
		return denyLatestTag{}, nil
	})
	// ServiceAccount, Priority and LimitRanger read cluster objects that this
	// example does not provide, and ResourceQuota writes through the server
	// (see admissiontest.Cluster).
	names, err := r.Enabled(nil, []string{"ServiceAccount", "Priority", "LimitRanger", "ResourceQuota"})
	if err != nil {
		panic(err)
	}
	fmt.Println(names)

	pc := admission.PluginContext{Namespaces: namespaces{"default": {ObjectMeta: metav1.ObjectMeta{Name: "default"}}}, Cache: noObjects{},
		Authorizer: admission.AuthorizerFunc(func(context.Context, admission.AuthorizationAttributes) (admission.AuthorizationDecision, string, error) {
			return admission.AuthorizationAllow, "", nil // the certificate plugins ask it
		})}
	chain, err := r.NewChain(names, pc, nil)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, a := range []*admission.Attributes{
		podCreate("default", "nginx:1.27"),
		podCreate("default", "nginx:latest"),
		podCreate("missing", "nginx:1.27"),
	} {
		err := chain.Admit(ctx, a)
		if err == nil {
			err = chain.Validate(ctx, a)
		}
		fmt.Printf("%s/%s: %v\n", a.Namespace, a.Object.(*corev1.Pod).Spec.Containers[0].Image, err)
	}
	// Output:
	// [NamespaceLifecycle TaintNodesByCondition PodSecurity DefaultTolerationSeconds DefaultStorageClass StorageObjectInUseProtection PodGroupProtection PersistentVolumeClaimResize RuntimeClass CertificateApproval CertificateSigning ClusterTrustBundleAttest CertificateSubjectRestriction DefaultIngressClass PodTopologyLabels NodeDeclaredFeatureValidator PodResizeValidator MutatingAdmissionPolicy MutatingAdmissionWebhook ValidatingAdmissionPolicy DenyLatestTag ValidatingAdmissionWebhook]
	// default/nginx:1.27: <nil>
	// default/nginx:latest: pods "web" is forbidden: container "web": the latest tag is not allowed
	// missing/nginx:1.27: namespaces "missing" not found
}
