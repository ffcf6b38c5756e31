// Package bootstrap is kube-apiserver's bootstrap RBAC policy as data: the
// ClusterRoles, ClusterRoleBindings, and the Roles and RoleBindings of
// kube-system and kube-public that kube-apiserver reconciles at start-up
// (cluster-admin, admin/edit/view and their aggregation, system:discovery,
// system:basic-user, system:public-info-viewer, system:node, the controller
// roles, ...).
//
// policy.json is generated from upstream's own bootstrap policy
// (k8s.io/kubernetes v1.37.2, default feature gates) by the test-only module
// test/upstream (do not edit it by hand), whose test also checks that it
// still equals upstream's:
//
//	cd test/upstream && go test ./rbac -run TestBootstrapData -update
//
// This package only holds the data; reconciling it into storage, and filling
// in the aggregated ClusterRoles, is the caller's job.
package bootstrap

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// KubernetesVersion is the upstream release the policy was generated from.
const KubernetesVersion = "v1.37.2"

// The policy is JSON, not YAML, because every server start decodes it:
// encoding/json reads it about 15 times faster than sigs.k8s.io/yaml.
//
//go:embed policy.json
var data []byte

// Policy is the bootstrap policy. Every object carries its apiVersion and
// kind, and upstream's bootstrap label and autoupdate annotation.
type Policy struct {
	ClusterRoles        []rbacv1.ClusterRole        `json:"clusterRoles"`
	ClusterRoleBindings []rbacv1.ClusterRoleBinding `json:"clusterRoleBindings"`
	// Roles and RoleBindings are namespaced (kube-system, kube-public).
	Roles        []rbacv1.Role        `json:"roles"`
	RoleBindings []rbacv1.RoleBinding `json:"roleBindings"`
	// ClusterRolesToAggregate maps a ClusterRole that older releases defined
	// by rules (admin, edit, view) to the ClusterRole that now carries those
	// rules and is aggregated into it; reconciliation migrates one to the other.
	ClusterRolesToAggregate map[string]string `json:"clusterRolesToAggregate"`
	// ClusterRoleBindingsToSplit maps the name of an existing
	// ClusterRoleBinding to a new binding that, when it does not exist yet,
	// is created with the existing one's subjects, labels and annotations.
	ClusterRoleBindingsToSplit map[string]rbacv1.ClusterRoleBinding `json:"clusterRoleBindingsToSplit"`
}

// Load decodes the embedded policy. Each call returns a new copy, which the
// caller may modify.
func Load() (*Policy, error) {
	var p Policy
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("bootstrap RBAC policy: %w", err)
	}
	return &p, nil
}

// Fingerprint is the SHA-256 of the embedded policy, in hex: it changes
// whenever the policy does.
func Fingerprint() string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Data returns the embedded policy.json.
func Data() []byte { return append([]byte(nil), data...) }

// Objects are the policy's roles and bindings in creation order: cluster
// roles, cluster role bindings, roles, role bindings. They point into p.
func (p *Policy) Objects() []runtime.Object {
	objs := make([]runtime.Object, 0, len(p.ClusterRoles)+len(p.ClusterRoleBindings)+len(p.Roles)+len(p.RoleBindings))
	for i := range p.ClusterRoles {
		objs = append(objs, &p.ClusterRoles[i])
	}
	for i := range p.ClusterRoleBindings {
		objs = append(objs, &p.ClusterRoleBindings[i])
	}
	for i := range p.Roles {
		objs = append(objs, &p.Roles[i])
	}
	for i := range p.RoleBindings {
		objs = append(objs, &p.RoleBindings[i])
	}
	return objs
}
