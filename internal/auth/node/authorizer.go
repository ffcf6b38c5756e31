package node

import (
	"context"
	"errors"
	"fmt"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/auth/rbac"
	"github.com/admitd/admitd/internal/auth/rbac/bootstrap"
)

// Authorizer is the Node authorizer. It has an opinion only on requests of
// nodes (see Identity), and then only allows: what it does not allow it
// leaves to the next authorizer (DecisionNoOpinion), with upstream's reason.
type Authorizer struct {
	graph *Graph
	// rules returns what is allowed to every node for resources that the
	// graph and the fixed rules do not cover.
	rules func() []rbacv1.PolicyRule
}

var (
	_ auth.Authorizer    = (*Authorizer)(nil)
	_ auth.RulesReviewer = (*Authorizer)(nil)
)

// New returns an authorizer that reads g and allows rules to every node for
// the resources it does not decide itself; kube-apiserver passes the rules
// of the bootstrap ClusterRole system:node (see BootstrapRules).
func New(g *Graph, rules []rbacv1.PolicyRule) *Authorizer {
	return &Authorizer{graph: g, rules: func() []rbacv1.PolicyRule { return rules }}
}

// NewWithBootstrapRules is New with the rules of BootstrapRules, read on
// the first request they decide rather than at start (reading them
// decodes the whole bootstrap policy, milliseconds a restart need not
// wait for). The embedded policy is checked by tests; should it ever
// lack the role, nodes get no rules beyond the graph's.
func NewWithBootstrapRules(g *Graph) *Authorizer {
	return &Authorizer{graph: g, rules: sync.OnceValue(func() []rbacv1.PolicyRule {
		rules, _ := BootstrapRules()
		return rules
	})}
}

// BootstrapRules are the rules of the ClusterRole system:node in the
// bootstrap policy, upstream's bootstrappolicy.NodeRules.
func BootstrapRules() ([]rbacv1.PolicyRule, error) {
	p, err := bootstrap.Load()
	if err != nil {
		return nil, err
	}
	for _, r := range p.ClusterRoles {
		if r.Name == "system:node" {
			return r.Rules, nil
		}
	}
	return nil, errors.New("bootstrap RBAC policy: no ClusterRole system:node")
}

// errNoRules is returned by RulesReview for nodes, as upstream.
var errNoRules = errors.New("node authorizer does not support user rule resolution")

// RulesReview lists no rules; for a node it reports the list incomplete,
// with an error, as a node's permissions depend on the graph.
func (a *Authorizer) RulesReview(user authenticationv1.UserInfo, _ string) (
	[]authorizationv1.ResourceRule, []authorizationv1.NonResourceRule, bool, error) {
	if _, isNode := Identity(user); isNode {
		return nil, nil, true, errNoRules
	}
	return nil, nil, false, nil
}

// Authorize decides a request of a node and has no opinion on others.
func (a *Authorizer) Authorize(_ context.Context, attrs auth.Attributes) (auth.Decision, string, error) {
	node, isNode := Identity(attrs.User)
	if !isNode {
		return auth.DecisionNoOpinion, "", nil
	}
	if node == "" {
		return auth.DecisionNoOpinion, fmt.Sprintf("unknown node for user %q", attrs.User.Username), nil
	}
	if attrs.ResourceRequest {
		if decide, ok := deciders[groupResource{attrs.APIGroup, attrs.Resource}]; ok {
			d, reason := decide(a.graph, request{node: node, Attributes: attrs})
			return d, reason, nil
		}
	}
	if rbac.RulesAllow(attrs, a.rules()...) {
		return auth.DecisionAllow, "", nil
	}
	return auth.DecisionNoOpinion, "", nil
}
