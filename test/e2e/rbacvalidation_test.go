package e2e

import (
	"strings"
	"testing"
)

// The RBAC kinds are defaulted and validated as kube-apiserver 1.37.2 does;
// every expected text below is what the real kube-apiserver answered to
// the same kubectl commands.

const brokenRoleBinding = `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: broken
  namespace: team-a
roleRef:
  kind: Deployment
  name: ""
subjects:
- kind: ServiceAccount
  name: Bad_SA
  apiGroup: v1
- kind: Robot
`

const readersRoleBinding = `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: readers
  namespace: team-a
roleRef:
  kind: ClusterRole
  name: view
subjects:
- kind: User
  name: alice
- kind: ServiceAccount
  name: default
`

func TestKubectlRBACValidation(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	a.MustKubectl(t, "", "create", "namespace", "team-a")

	_, errOut, err := a.Kubectl(t, brokenRoleBinding, "create", "-f", "-")
	want := `The RoleBinding "broken" is invalid: 
* roleRef.kind: Unsupported value: "Deployment": supported values: "Role", "ClusterRole"
* subjects[0].name: Invalid value: "Bad_SA": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')
* subjects[0].apiGroup: Unsupported value: "v1": supported values: ""
* subjects[1].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"
* subjects[1].name: Required value
* roleRef.name: Required value`
	if err == nil || strings.TrimSpace(errOut) != want {
		t.Errorf("create invalid RoleBinding: err=%v stderr=\n%s\nwant\n%s", err, errOut, want)
	}

	a.MustKubectl(t, readersRoleBinding, "create", "-f", "-")
	got := a.MustKubectl(t, "", "get", "rolebinding", "readers", "-n", "team-a", "-o",
		"jsonpath={.roleRef.apiGroup}|{.subjects[0].apiGroup}|{.subjects[1].apiGroup}")
	if got != "rbac.authorization.k8s.io|rbac.authorization.k8s.io|" {
		t.Errorf("defaulted groups (roleRef|User|ServiceAccount) = %q, want rbac.authorization.k8s.io|rbac.authorization.k8s.io|", got)
	}

	stored := a.MustKubectl(t, "", "get", "rolebinding", "readers", "-n", "team-a", "-o", "json")
	changed := strings.Replace(stored, `"name": "view"`, `"name": "edit"`, 1)
	_, errOut, err = a.Kubectl(t, changed, "replace", "-f", "-")
	want = `The RoleBinding "readers" is invalid: roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: field is immutable`
	if err == nil || strings.TrimSpace(errOut) != want {
		t.Errorf("change roleRef: err=%v stderr=%q, want %q", err, errOut, want)
	}

	// A PUT of a missing RBAC object creates it (AllowCreateOnUpdate).
	put := strings.NewReplacer("readers", "putme", "name: alice", "name: bob").Replace(readersRoleBinding)
	if out := a.MustKubectl(t, put, "replace", "-f", "-"); !strings.Contains(out, "rolebinding.rbac.authorization.k8s.io/putme replaced") {
		t.Errorf("replace of a missing RoleBinding = %q, want it replaced (created)", out)
	}
	a.MustKubectl(t, "", "get", "rolebinding", "putme", "-n", "team-a")
}
