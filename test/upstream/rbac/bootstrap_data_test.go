package rbac

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"

	"github.com/admitd/admitd/internal/auth/rbac/bootstrap"
)

var update = flag.Bool("update", false, "rewrite internal/auth/rbac/bootstrap/policy.json from upstream's bootstrap policy")

const bootstrapFile = "../../../internal/auth/rbac/bootstrap/policy.json"

// upstreamBootstrap is upstream's bootstrap policy in bootstrap.Policy's
// shape; namespaced objects are ordered by namespace.
func upstreamBootstrap() bootstrap.Policy {
	p := bootstrap.Policy{
		ClusterRoles:               append(bootstrappolicy.ClusterRoles(), bootstrappolicy.ControllerRoles()...),
		ClusterRoleBindings:        append(bootstrappolicy.ClusterRoleBindings(), bootstrappolicy.ControllerRoleBindings()...),
		ClusterRolesToAggregate:    bootstrappolicy.ClusterRolesToAggregate(),
		ClusterRoleBindingsToSplit: bootstrappolicy.ClusterRoleBindingsToSplit(),
	}
	roles, bindings := bootstrappolicy.NamespaceRoles(), bootstrappolicy.NamespaceRoleBindings()
	for _, ns := range sortedKeys(roles) {
		p.Roles = append(p.Roles, roles[ns]...)
	}
	for _, ns := range sortedKeys(bindings) {
		p.RoleBindings = append(p.RoleBindings, bindings[ns]...)
	}
	gv := rbacv1.SchemeGroupVersion.String()
	for i := range p.ClusterRoles {
		p.ClusterRoles[i].APIVersion, p.ClusterRoles[i].Kind = gv, "ClusterRole"
	}
	for i := range p.ClusterRoleBindings {
		p.ClusterRoleBindings[i].APIVersion, p.ClusterRoleBindings[i].Kind = gv, "ClusterRoleBinding"
	}
	for i := range p.Roles {
		p.Roles[i].APIVersion, p.Roles[i].Kind = gv, "Role"
	}
	for i := range p.RoleBindings {
		p.RoleBindings[i].APIVersion, p.RoleBindings[i].Kind = gv, "RoleBinding"
	}
	for name, b := range p.ClusterRoleBindingsToSplit {
		b.APIVersion, b.Kind = gv, "ClusterRoleBinding"
		p.ClusterRoleBindingsToSplit[name] = b
	}
	return p
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestBootstrapData: the policy admitd embeds is upstream's, byte for byte
// as generated and equal once decoded. -update regenerates it.
func TestBootstrapData(t *testing.T) {
	want := upstreamBootstrap()
	// JSON has no comments: the package documentation says how the
	// file is made (DO NOT EDIT; regenerate with -update).
	body, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	generated := append(body, '\n')
	if *update {
		if err := os.WriteFile(filepath.FromSlash(bootstrapFile), generated, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", bootstrapFile, len(generated))
		return
	}
	if !bytes.Equal(bootstrap.Data(), generated) {
		t.Errorf("internal/auth/rbac/bootstrap/policy.json is not upstream's current policy; regenerate it with -update")
	}
	got, err := bootstrap.Load()
	if err != nil {
		t.Fatalf("bootstrap.Load() = %v", err)
	}
	if !equality.Semantic.DeepEqual(*got, want) {
		t.Errorf("bootstrap.Load() differs from upstream's policy")
	}
	if len(got.ClusterRoles) < 50 || len(got.ClusterRoleBindings) < 40 || len(got.Roles) == 0 || len(got.RoleBindings) == 0 {
		t.Errorf("bootstrap.Load() = %d ClusterRoles, %d ClusterRoleBindings, %d Roles, %d RoleBindings: too few",
			len(got.ClusterRoles), len(got.ClusterRoleBindings), len(got.Roles), len(got.RoleBindings))
	}
}
