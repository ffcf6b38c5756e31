package registry

import (
	"regexp"
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// lintFinding is a warning of pkg/lint, which admission configurations
// add after upstream's.
var lintFinding = regexp.MustCompile(`^AL\d{3} \(`)

// TestKindWarnings checks a warning of each kind that gained them, through
// the resource's Warnings (create) and UpdateWarnings (update, by
// subresource); test/upstream/kindwarnings compares them with upstream's.
func TestKindWarnings(t *testing.T) {
	widgets := CustomResources(&apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "example.com", Scope: apiextensionsv1.NamespaceScoped, Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true}}}})[0]
	widget := func(finalizers ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "w", "finalizers": finalizers}}}
	}
	quota := &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		"requests.memory": resource.MustParse("2Gi"), "limits.memory": resource.MustParse("1Gi")}}}
	podWithIP := &corev1.Pod{Status: corev1.PodStatus{PodIPs: []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "2001:DB8::1"}}}}
	ingress := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"kubernetes.io/ingress.class": "nginx"}}}
	template := corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeSelector: map[string]string{"beta.kubernetes.io/os": "linux"}}}
	deployment := func(generation int64) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Generation: generation}, Spec: appsv1.DeploymentSpec{Template: template}}
	}
	hook := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "h.static.k8s.io"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Rules: []admissionregistrationv1.RuleWithOperations{{Rule: admissionregistrationv1.Rule{
			APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews", "subjectaccessreviews"}}}}}}}
	for _, tc := range []struct {
		name     string
		res      *Resource
		sub      string
		obj, old runtime.Object
		want     []string
	}{
		{"quota on create", resourceFor(t, quota), "", quota, nil,
			[]string{"ResourceQuota requests.memory (2Gi) should be less than limits.memory (1Gi)"}},
		{"quota on update", resourceFor(t, quota), "", quota, quota, nil},
		{"pod status IPs", resourceFor(t, podWithIP), "status", podWithIP, &corev1.Pod{},
			[]string{`status.podIPs[1].ip: IPv6 address "2001:DB8::1" should be in RFC 5952 canonical format ("2001:db8::1")`}},
		{"pod status IPs through the main resource", resourceFor(t, podWithIP), "", podWithIP, &corev1.Pod{}, nil},
		{"ingress class annotation on create", resourceFor(t, ingress), "", ingress, nil,
			[]string{`annotation "kubernetes.io/ingress.class" is deprecated, please use 'spec.ingressClassName' instead`}},
		{"ingress status without IPs", resourceFor(t, ingress), "status", ingress, ingress, nil},
		{"scale warns as the main resource", resourceFor(t, deployment(1)), "scale", deployment(2), deployment(1),
			[]string{`spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`}},
		{"ephemeral containers do not warn", resourceFor(t, podWithIP), "ephemeralcontainers", podWithIP, &corev1.Pod{}, nil},
		{"webhook on an excluded resource, static name on update", resourceFor(t, hook), "", hook, hook, []string{
			`metadata.name: names ending with ".static.k8s.io" are reserved for static manifest-based configurations and cannot be managed via the API`,
			"webhooks[0].rules[0]: subjectaccessreviews.authorization.k8s.io is excluded from admission webhooks; this rule will have no effect"}},
		{"custom resource finalizers added", widgets, "", widget("a/b", "orphan", "plain", "x.example.com", "x.example.com"), widget("a/b"), []string{
			`metadata.finalizers: "plain": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers`,
			`metadata.finalizers: "x.example.com": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers`}},
		{"custom resource finalizers kept", widgets, "", widget("plain"), widget("plain"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			if tc.old == nil {
				got = tc.res.Warnings(tc.obj, nil)
			} else {
				got = tc.res.UpdateWarnings(tc.sub, tc.obj, tc.old)
			}
			got = slices.DeleteFunc(got, lintFinding.MatchString)
			if !slices.Equal(got, tc.want) {
				t.Errorf("warnings = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSecretWarningsOnlyForTLS(t *testing.T) {
	opaque := &corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"tls.crt": []byte("x")}}
	if got := secretWarnings(opaque, nil); got != nil {
		t.Errorf("secretWarnings(opaque) = %q, want none", got)
	}
	bad := &corev1.Secret{Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": []byte("x"), "tls.key": []byte("y")}}
	if got := secretWarnings(bad, nil); len(got) != 1 || got[0] != "tls: failed to find any PEM data in certificate input" {
		t.Errorf("secretWarnings(TLS without PEM) = %q, want crypto/tls's error", got)
	}
}
