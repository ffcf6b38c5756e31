package admission_test

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
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
// chain with the standard plugins over a small in-memory cluster
// (admissiontest.Cluster: the "default" namespace and its service account):
// ServiceAccount and DefaultTolerationSeconds change the pod, NamespaceLifecycle
// refuses Pods in a namespace that does not exist, DenyLatestTag refuses the
// latest tag.
func Example_ownPlugin() {
	r := standard.NewRegistry(standard.Options{})
	r.RegisterBefore("DenyLatestTag", "ValidatingAdmissionWebhook", func(admission.PluginContext) (admission.Handler, error) {
		return denyLatestTag{}, nil
	})
	names, err := r.Enabled(nil, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(names)

	cluster := admissiontest.NewCluster(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "default"}},
	)
	pc := cluster.Plugins(admission.PluginContext{
		Authorizer: admission.AuthorizerFunc(func(context.Context, admission.AuthorizationAttributes) (admission.AuthorizationDecision, string, error) {
			return admission.AuthorizationAllow, "", nil // the certificate plugins ask it
		})})
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
		pod := a.Object.(*corev1.Pod)
		fmt.Printf("%s/%s: %v (service account %q, %d volumes, %d tolerations)\n", a.Namespace, pod.Spec.Containers[0].Image, err,
			pod.Spec.ServiceAccountName, len(pod.Spec.Volumes), len(pod.Spec.Tolerations))
	}
	// Output:
	// [NamespaceLifecycle LimitRanger ServiceAccount TaintNodesByCondition PodSecurity Priority DefaultTolerationSeconds DefaultStorageClass StorageObjectInUseProtection PodGroupProtection PersistentVolumeClaimResize RuntimeClass CertificateApproval CertificateSigning ClusterTrustBundleAttest CertificateSubjectRestriction DefaultIngressClass PodTopologyLabels NodeDeclaredFeatureValidator PodResizeValidator MutatingAdmissionPolicy MutatingAdmissionWebhook ValidatingAdmissionPolicy DenyLatestTag ValidatingAdmissionWebhook ResourceQuota]
	// default/nginx:1.27: <nil> (service account "default", 1 volumes, 2 tolerations)
	// default/nginx:latest: pods "web" is forbidden: container "web": the latest tag is not allowed (service account "default", 1 volumes, 2 tolerations)
	// missing/nginx:1.27: namespaces "missing" not found (service account "", 0 volumes, 0 tolerations)
}
