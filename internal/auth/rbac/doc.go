// Package rbac decides requests from Roles, ClusterRoles, RoleBindings and
// ClusterRoleBindings (rbac.authorization.k8s.io/v1) with the semantics of
// kube-apiserver's RBAC authorizer, and guards writes of those objects
// against privilege escalation as kube-apiserver's RBAC storage does.
//
// A Snapshot is an immutable, indexed view of the four lists: bindings are
// found by subject (user, group, service account), so the cost of a decision
// grows with the bindings that name the requester, not with all bindings.
// An Authorizer answers from the Snapshot it currently holds; whoever keeps
// the lists up to date (a watch-fed cache) builds a new Snapshot and Stores
// it. RulesFor and RulesReview list a user's rules (SelfSubjectRulesReview); Covers,
// ConfirmNoEscalation and WriteCheck are the escalation checks.
//
// AggregatedRules computes the rules of an aggregated ClusterRole.
//
// The package reads no storage and knows nothing of HTTP: it neither watches
// the RBAC objects, nor writes aggregated ClusterRoles, nor reconciles the
// bootstrap policy (the data of which is in package bootstrap). The 403 message shown
// to users is internal/auth.Forbidden. test/upstream compares all of it with
// upstream's own code.
package rbac
