package match

import (
	"strings"

	v1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

// opMask holds the four admission operations as bits.
type opMask uint8

const (
	opCreate opMask = 1 << iota
	opUpdate
	opDelete
	opConnect
)

func opBit(op string) opMask {
	switch op {
	case string(admission.Create):
		return opCreate
	case string(admission.Update):
		return opUpdate
	case string(admission.Delete):
		return opDelete
	case string(admission.Connect):
		return opConnect
	}
	return 0
}

// scopeMode is a compiled Rule.Scope.
type scopeMode uint8

const (
	scopeAll scopeMode = iota
	scopeNamespaced
	scopeCluster
	scopeNone // an unknown scope matches nothing
)

// resourcePattern is one entry of Rule.Resources split at its first "/":
// "pods/*" is {pods, *}, "*" is {*, ""}.
type resourcePattern struct {
	res, sub string
}

func (p resourcePattern) matches(res, sub string) bool {
	return (p.res == "*" || p.res == res) && (p.sub == "*" || p.sub == sub)
}

// rule is a compiled RuleWithOperations (with resourceNames for policies).
type rule struct {
	ops        opMask
	anyOp      bool
	otherOps   []string // operations other than the four, kept for fidelity
	anyGroup   bool
	groups     []string
	anyVersion bool
	versions   []string
	resources  []resourcePattern
	scope      scopeMode
	names      []string // empty: any name
}

// outcome of testing one rule against one resource.
type outcome uint8

const (
	ruleMiss  outcome = iota // operation, group, version or resource differ
	scopeMiss                // everything but the scope matches
	ruleHit
)

func compileRule(r v1.RuleWithOperations, names []string) rule {
	c := rule{names: names}
	for _, op := range r.Operations {
		switch {
		case op == v1.OperationAll:
			c.anyOp = true
		case opBit(string(op)) != 0:
			c.ops |= opBit(string(op))
		default:
			c.otherOps = append(c.otherOps, string(op))
		}
	}
	c.anyGroup, c.groups = compileList(r.APIGroups)
	c.anyVersion, c.versions = compileList(r.APIVersions)
	c.resources = make([]resourcePattern, len(r.Resources))
	for i, s := range r.Resources {
		res, sub, _ := strings.Cut(s, "/")
		c.resources[i] = resourcePattern{res: res, sub: sub}
	}
	c.scope = scopeAll
	if r.Scope != nil {
		switch *r.Scope {
		case v1.AllScopes:
		case v1.NamespacedScope:
			c.scope = scopeNamespaced
		case v1.ClusterScope:
			c.scope = scopeCluster
		default:
			c.scope = scopeNone
		}
	}
	return c
}

// compileList returns whether the list holds "*", and the list itself.
func compileList(items []string) (bool, []string) {
	for _, s := range items {
		if s == "*" {
			return true, nil
		}
	}
	return false, items
}

func (c *rule) operation(op admission.Operation) bool {
	if c.anyOp {
		return true
	}
	if b := opBit(string(op)); b != 0 {
		return c.ops&b != 0
	}
	for _, o := range c.otherOps {
		if o == string(op) {
			return true
		}
	}
	return false
}

func contains(items []string, s string) bool {
	for _, it := range items {
		if it == s {
			return true
		}
	}
	return false
}

var namespacesResource = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// inScope applies the rule's scope as upstream does: a request is namespaced
// when it carries a namespace, except for core/v1 namespaces themselves
// (whose requests carry their own name as namespace).
func (c *rule) inScope(gvr schema.GroupVersionResource, namespace string) bool {
	switch c.scope {
	case scopeAll:
		return true
	case scopeNamespaced:
		return gvr != namespacesResource && namespace != ""
	case scopeCluster:
		return gvr == namespacesResource || namespace == ""
	}
	return false
}

// test matches the rule against the request with its resource replaced by
// gvr (an equivalent one, or the request's own). Names are not checked.
func (c *rule) test(a *admission.Attributes, gvr schema.GroupVersionResource) outcome {
	if !c.operation(a.Operation) ||
		!(c.anyGroup || contains(c.groups, gvr.Group)) ||
		!(c.anyVersion || contains(c.versions, gvr.Version)) {
		return ruleMiss
	}
	hit := false
	for _, p := range c.resources {
		if p.matches(gvr.Resource, a.Subresource) {
			hit = true
			break
		}
	}
	if !hit {
		return ruleMiss
	}
	if !c.inScope(gvr, a.Namespace) {
		return scopeMiss
	}
	return ruleHit
}

// named reports whether the request name satisfies resourceNames.
func (c *rule) named(name string) bool {
	return len(c.names) == 0 || contains(c.names, name)
}
