package authzconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeFile writes data to a new file in the test's directory.
func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadDefaults(t *testing.T) {
	kubeconfig := writeFile(t, "kc", "apiVersion: v1\nkind: Config\n")
	for _, version := range []string{"v1", "v1beta1", "v1alpha1"} {
		t.Run(version, func(t *testing.T) {
			path := writeFile(t, "authz.yaml", `apiVersion: apiserver.config.k8s.io/`+version+`
kind: AuthorizationConfiguration
authorizers:
- type: Node
  name: node
- type: RBAC
  name: rbac
- type: Webhook
  name: remote
  webhook:
    timeout: 3s
    subjectAccessReviewVersion: v1
    failurePolicy: Deny
    connectionInfo:
      type: KubeConfigFile
      kubeConfigFile: `+kubeconfig+`
`)
			c, err := Load(path)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if len(c.Authorizers) != 3 || c.Authorizers[2].Name != "remote" {
				t.Fatalf("Load = %+v, want three authorizers, the last remote", c.Authorizers)
			}
			w := c.Authorizers[2].Webhook
			if w.AuthorizedTTL.Duration != 5*time.Minute || w.UnauthorizedTTL.Duration != 30*time.Second ||
				!w.CacheAuthorizedRequests || !w.CacheUnauthorizedRequests {
				t.Errorf("webhook defaults = %v %v %v %v, want 5m 30s true true", w.AuthorizedTTL, w.UnauthorizedTTL,
					w.CacheAuthorizedRequests, w.CacheUnauthorizedRequests)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	kubeconfig := writeFile(t, "kc", "apiVersion: v1\nkind: Config\n")
	webhook := func(extra string) string {
		return `apiVersion: apiserver.config.k8s.io/v1
kind: AuthorizationConfiguration
authorizers:
- type: Webhook
  name: remote
  webhook:
` + extra
	}
	const good = `    timeout: 3s
    subjectAccessReviewVersion: v1
    failurePolicy: NoOpinion
`
	conn := "    connectionInfo:\n      type: KubeConfigFile\n      kubeConfigFile: " + kubeconfig + "\n"
	head := "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n"
	tests := []struct{ name, config, want string }{
		{"no authorizers", head + "authorizers: []\n", "authorizers: Required value: at least one authorization mode must be defined"},
		{"unknown type", head + "authorizers:\n- type: Magic\n  name: m\n", `authorizers[0].type: Unsupported value: "Magic"`},
		{"duplicate type", head + "authorizers:\n- {type: RBAC, name: a}\n- {type: RBAC, name: b}\n", `authorizers[1].type: Duplicate value: "RBAC"`},
		{"duplicate name", head + "authorizers:\n- {type: RBAC, name: a}\n- {type: Node, name: a}\n", `authorizers[1].name: Duplicate value: "a"`},
		{"bad name", head + "authorizers:\n- {type: RBAC, name: A_B}\n", `authorizers[0].name: Invalid value: "A_B": authorizer name is invalid`},
		{"no name", head + "authorizers:\n- {type: RBAC}\n", `authorizers[0].name: Required value`},
		{"ABAC", head + "authorizers:\n- {type: ABAC, name: abac}\n", `authorizers[0].type: Invalid value: "ABAC": not implemented by admitd yet`},
		{"webhook on RBAC", head + "authorizers:\n- type: RBAC\n  name: rbac\n  webhook: {timeout: 3s}\n", "authorizers[0].webhook: Invalid value: \"non-null\": may only be specified when type=Webhook"},
		{"webhook missing", head + "authorizers:\n- {type: Webhook, name: w}\n", "authorizers[0].webhook: Required value: required when type=Webhook"},
		{"timeout too long", webhook("    timeout: 31s\n    subjectAccessReviewVersion: v1\n    failurePolicy: Deny\n" + conn), `authorizers[0].timeout: Invalid value: "31s": must be > 0s and <= 30s`},
		{"no timeout", webhook("    subjectAccessReviewVersion: v1\n    failurePolicy: Deny\n" + conn), "authorizers[0].timeout: Required value"},
		{"bad version", webhook("    timeout: 3s\n    subjectAccessReviewVersion: v2\n    failurePolicy: Deny\n" + conn), `authorizers[0].subjectAccessReviewVersion: Unsupported value: "v2"`},
		{"bad policy", webhook("    timeout: 3s\n    subjectAccessReviewVersion: v1\n    failurePolicy: Allow\n" + conn), `authorizers[0].failurePolicy: Unsupported value: "Allow"`},
		{"relative kubeconfig", webhook(good + "    connectionInfo: {type: KubeConfigFile, kubeConfigFile: rel/kc}\n"), `authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "rel/kc": must be an absolute path`},
		{"missing kubeconfig", webhook(good + "    connectionInfo: {type: KubeConfigFile, kubeConfigFile: /nonexistent/kc}\n"), `authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "/nonexistent/kc": error loading file`},
		{"kubeconfig with in-cluster", webhook(good + "    connectionInfo: {type: InClusterConfig, kubeConfigFile: " + kubeconfig + "}\n"), "can only be set when type=KubeConfigFile"},
		{"no connection type", webhook(good), "authorizers[0].connectionInfo.type: Required value"},
		{"match conditions without version", webhook(good + conn + "    matchConditions:\n    - expression: 'true'\n"), "authorizers[0].matchConditionSubjectAccessReviewVersion: Required value: required if match conditions are specified"},
		{"empty match condition", webhook(good + conn + "    matchConditionSubjectAccessReviewVersion: v1\n    matchConditions:\n    - expression: ' '\n"), "authorizers[0].matchConditions[0].expression: Required value"},
		{"duplicate match condition", webhook(good + conn + "    matchConditionSubjectAccessReviewVersion: v1\n    matchConditions:\n    - expression: 'true'\n    - expression: 'true'\n"), `authorizers[0].matchConditions[1].expression: Duplicate value: "true"`},
		{"match condition not bool", webhook(good + conn + "    matchConditionSubjectAccessReviewVersion: v1\n    matchConditions:\n    - expression: request.user\n"), `authorizers[0].matchConditions[0].expression: Invalid value: "request.user": must evaluate to bool`},
		{"match condition unknown variable", webhook(good + conn + "    matchConditionSubjectAccessReviewVersion: v1\n    matchConditions:\n    - expression: object.x\n"), `authorizers[0].matchConditions[0].expression: Invalid value: "object.x": compilation failed`},
		{"match condition version", webhook(good + conn + "    matchConditionSubjectAccessReviewVersion: v1beta1\n    matchConditions:\n    - expression: 'true'\n"), `authorizers[0].matchConditionSubjectAccessReviewVersion: Unsupported value: "v1beta1"`},
		{"unknown field", head + "authorizers:\n- {type: RBAC, name: rbac, color: blue}\n", `unknown field "authorizers[0].color"`},
		{"wrong kind", "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: []\n", "expected AuthorizationConfiguration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(writeFile(t, "authz.yaml", tt.config))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load = %v, want an error with %q", err, tt.want)
			}
		})
	}
}
