package lint

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// webhookYAML is a validating configuration of one webhook whose fields
// are given as YAML lines (indented by the caller's two spaces).
func webhookYAML(kind string, fields ...string) string {
	return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: %s
metadata: {name: cfg}
webhooks:
- name: hook.example.com
  sideEffects: None
  admissionReviewVersions: [v1]
  %s
`, kind, strings.Join(fields, "\n  "))
}

const urlClient = `clientConfig: {url: "https://webhook.example.com/x"}`

// TestScopeSemantics checks that rules and selectors are evaluated as the
// API server evaluates them: versions under matchPolicy, subresources,
// wildcards, namespace labels, object labels and failure policies.
func TestScopeSemantics(t *testing.T) {
	notKubeSystem := `namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system]}]}`
	svcClient := `clientConfig: {service: {namespace: hooks, name: svc}}`
	excludeOwn := `namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, hooks]}]}`
	tests := []struct {
		name  string
		yaml  string
		want  []string
		worst Severity
	}{
		{"leases v1beta1 Equivalent", webhookYAML("ValidatingWebhookConfiguration", urlClient, notKubeSystem,
			`rules: [{operations: [UPDATE], apiGroups: [coordination.k8s.io], apiVersions: [v1beta1], resources: [leases]}]`), []string{"AL003"}, Error},
		{"leases v1beta1 Exact", webhookYAML("ValidatingWebhookConfiguration", urlClient, notKubeSystem, "matchPolicy: Exact",
			`rules: [{operations: [UPDATE], apiGroups: [coordination.k8s.io], apiVersions: [v1beta1], resources: [leases]}]`), nil, Info},
		{"core * covers nodes, not leases", webhookYAML("ValidatingWebhookConfiguration", urlClient, notKubeSystem,
			`rules: [{operations: ["*"], apiGroups: [""], apiVersions: [v1], resources: ["*"]}]`), []string{"AL004", "AL006"}, Error},
		{"nodes/status alone", webhookYAML("ValidatingWebhookConfiguration", urlClient,
			`rules: [{operations: [UPDATE], apiGroups: [""], apiVersions: [v1], resources: [nodes/status]}]`), []string{"AL004"}, Error},
		{"nodes on DELETE only", webhookYAML("ValidatingWebhookConfiguration", urlClient,
			`rules: [{operations: [DELETE], apiGroups: [""], apiVersions: [v1], resources: [nodes]}]`), nil, Info},
		{"nodes excluded by objectSelector", webhookYAML("ValidatingWebhookConfiguration", urlClient,
			`objectSelector: {matchLabels: {checked: "yes"}}`,
			`rules: [{operations: [UPDATE], apiGroups: [""], apiVersions: [v1], resources: ["*"]}]`), []string{"AL006"}, Warning},
		{"kube-system selected by its labels", webhookYAML("ValidatingWebhookConfiguration", urlClient,
			`namespaceSelector: {matchLabels: {env: prod}}`,
			`rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]`) +
			"---\napiVersion: v1\nkind: Namespace\nmetadata: {name: kube-system, labels: {env: prod}}\n", []string{"AL001"}, Error},
		{"kube-system without the label", webhookYAML("ValidatingWebhookConfiguration", urlClient,
			`namespaceSelector: {matchLabels: {env: prod}}`,
			`rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]`), nil, Info},
		{"kube-system, failing open", webhookYAML("ValidatingWebhookConfiguration", urlClient, "failurePolicy: Ignore",
			`rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]`), []string{"AL001"}, Warning},
		{"cluster-scoped rule never sees kube-system", webhookYAML("ValidatingWebhookConfiguration", urlClient,
			`rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods], scope: Cluster}]`), nil, Info},
		{"own endpoints by the service's labels", webhookYAML("ValidatingWebhookConfiguration", svcClient, excludeOwn,
			`objectSelector: {matchLabels: {app: svc}}`,
			`rules: [{operations: [UPDATE], apiGroups: [""], apiVersions: [v1], resources: [endpoints]}]`) +
			"---\napiVersion: v1\nkind: Service\nmetadata: {name: svc, namespace: hooks, labels: {app: svc}}\n", nil, Info},
		{"own endpoints in own namespace", webhookYAML("ValidatingWebhookConfiguration", svcClient, notKubeSystem,
			`objectSelector: {matchLabels: {app: svc}}`,
			`rules: [{operations: [UPDATE], apiGroups: [""], apiVersions: [v1], resources: [endpoints]}]`) +
			"---\napiVersion: v1\nkind: Service\nmetadata: {name: svc, namespace: hooks, labels: {app: svc}}\n", []string{"AL005"}, Error},
		{"webhook configurations are exempt", webhookYAML("ValidatingWebhookConfiguration", urlClient, "failurePolicy: Ignore",
			`rules: [{operations: [CREATE], apiGroups: [admissionregistration.k8s.io], apiVersions: [v1], resources: ["*"]}]`), nil, Info},
		{"three validating 30s run in parallel", strings.Repeat(webhookYAML("ValidatingWebhookConfiguration", urlClient, notKubeSystem, "timeoutSeconds: 30",
			`rules: [{operations: [CREATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}]`)+"---\n", 1) +
			strings.Replace(webhookYAML("ValidatingWebhookConfiguration", urlClient, notKubeSystem, "timeoutSeconds: 30",
				`rules: [{operations: [CREATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}]`), "name: cfg", "name: cfg2", 1), nil, Info},
		{"mutating reinvoked 25s twice plus 20s", webhookYAML("MutatingWebhookConfiguration", urlClient, notKubeSystem, "timeoutSeconds: 25",
			"reinvocationPolicy: IfNeeded", `rules: [{operations: [CREATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}]`) + "---\n" +
			strings.Replace(webhookYAML("MutatingWebhookConfiguration", urlClient, notKubeSystem, "timeoutSeconds: 20",
				`rules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["deployments/*"]}]`), "name: cfg", "name: cfg2", 1), []string{"AL007"}, Error},
		{"complementary wildcards meet on pods/status", webhookYAML("MutatingWebhookConfiguration", urlClient, notKubeSystem, "timeoutSeconds: 30",
			`rules: [{operations: [UPDATE], apiGroups: [""], apiVersions: [v1], resources: ["pods/*"]}]`) + "---\n" +
			strings.Replace(webhookYAML("MutatingWebhookConfiguration", urlClient, notKubeSystem, "timeoutSeconds: 30",
				`objectSelector: {matchLabels: {app: x}}`,
				`rules: [{operations: [UPDATE], apiGroups: [""], apiVersions: [v1], resources: ["*/status"]}]`), "name: cfg", "name: cfg2", 1), []string{"AL007"}, Warning},
		{"disjoint object selectors", webhookYAML("MutatingWebhookConfiguration", urlClient, notKubeSystem, "timeoutSeconds: 30",
			`objectSelector: {matchExpressions: [{key: app, operator: DoesNotExist}]}`,
			`rules: [{operations: [UPDATE], apiGroups: [""], apiVersions: [v1], resources: ["pods/*"]}]`) + "---\n" +
			strings.Replace(webhookYAML("MutatingWebhookConfiguration", urlClient, notKubeSystem, "timeoutSeconds: 30",
				`objectSelector: {matchLabels: {app: x}}`,
				`rules: [{operations: [UPDATE], apiGroups: [""], apiVersions: [v1], resources: ["*/status"]}]`), "name: cfg", "name: cfg2", 1), nil, Info},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Set{}
			if err := s.Decode(strings.NewReader(tt.yaml), "test"); err != nil {
				t.Fatal(err)
			}
			fs := Run(context.Background(), s, Options{})
			if got := ids(fs); !slices.Equal(got, tt.want) {
				t.Errorf("Run() = %v, want %v\n%+v", got, tt.want, fs)
			}
			if worst, _ := Worst(fs); worst != tt.worst {
				t.Errorf("worst severity = %s, want %s", worst, tt.worst)
			}
		})
	}
}

// TestWarnings checks the one-object form the API server uses.
func TestWarnings(t *testing.T) {
	s := &Set{}
	yaml := webhookYAML("ValidatingWebhookConfiguration", urlClient,
		`rules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*/*"]}]`)
	if err := s.Decode(strings.NewReader(yaml), "test"); err != nil {
		t.Fatal(err)
	}
	got := Warnings(s.ValidatingWebhooks[0], nil)
	for _, id := range []string{"AL001", "AL003", "AL004", "AL006"} {
		if !slices.ContainsFunc(got, func(w string) bool { return strings.HasPrefix(w, id+" (error): ") }) {
			t.Errorf("Warnings() = %q, want an error line for %s", got, id)
		}
	}
	for _, w := range got {
		if strings.ContainsAny(w, "\n\r") {
			t.Errorf("warning %q spans lines", w)
		}
	}
	if got := Warnings(&corev1.ConfigMap{}, nil); got != nil {
		t.Errorf("Warnings(no object) = %q, want nil", got)
	}
}
