package node

import (
	"fmt"

	"k8s.io/apimachinery/pkg/selection"

	"github.com/admitd/admitd/internal/auth"
)

// request is a request of the node named node.
type request struct {
	node string
	auth.Attributes
}

type groupResource struct{ group, resource string }

// decider decides a request for one resource that the Node authorizer
// subdivides; everything else is checked against the static rules.
type decider func(g *Graph, r request) (auth.Decision, string)

var deciders = map[groupResource]decider{
	{"", "secrets"}:    readNamespaced(kindSecret),
	{"", "configmaps"}: readNamespaced(kindConfigMap),
	{"", "persistentvolumeclaims"}: func(g *Graph, r request) (auth.Decision, string) {
		if r.Subresource == "status" {
			return updateStatus(g, r, kindPVC)
		}
		return getOnly(g, r, kindPVC)
	},
	{"", "persistentvolumes"}:                         getOnlyOf(kindPV),
	{"resource.k8s.io", "resourceclaims"}:             getOnlyOf(kindResourceClaim),
	{"storage.k8s.io", "volumeattachments"}:           getOnlyOf(kindVolumeAttachment),
	{"", "serviceaccounts"}:                           serviceAccount,
	{"coordination.k8s.io", "leases"}:                 lease,
	{"storage.k8s.io", "csinodes"}:                    csiNode,
	{"resource.k8s.io", "resourceslices"}:             resourceSlice,
	{"", "nodes"}:                                     nodeObject,
	{"", "pods"}:                                      pod,
	{"certificates.k8s.io", "podcertificaterequests"}: podCertificateRequest,
}

func allow() (auth.Decision, string) { return auth.DecisionAllow, "" }

func noOpinion(reason string) (auth.Decision, string) { return auth.DecisionNoOpinion, reason }

// related allows a request for a named object that the graph relates to
// the node.
func related(g *Graph, r request, k kind) (auth.Decision, string) {
	if r.Name == "" {
		return noOpinion("No Object name found")
	}
	if !g.reachable(r.node, ref{k, r.Namespace, r.Name}) {
		return noOpinion(noRelationship(r.node))
	}
	return allow()
}

func noRelationship(node string) string {
	return fmt.Sprintf("no relationship found between node '%s' and this object", node)
}

// readNamespaced allows get, list and watch of a related object, by name.
func readNamespaced(k kind) decider {
	return func(g *Graph, r request) (auth.Decision, string) {
		switch {
		case r.Verb != "get" && r.Verb != "list" && r.Verb != "watch":
			return noOpinion("can only read resources of this type")
		case r.Subresource != "":
			return noOpinion("cannot read subresource")
		case r.Namespace == "":
			return noOpinion("can only read namespaced object of this type")
		}
		return related(g, r, k)
	}
}

func getOnlyOf(k kind) decider {
	return func(g *Graph, r request) (auth.Decision, string) { return getOnly(g, r, k) }
}

// getOnly allows get of a related object.
func getOnly(g *Graph, r request, k kind) (auth.Decision, string) {
	if r.Verb != "get" {
		return noOpinion("can only get individual resources of this type")
	}
	if r.Subresource != "" {
		return noOpinion("cannot get subresource")
	}
	return related(g, r, k)
}

// updateStatus allows update and patch of the status of a related object.
func updateStatus(g *Graph, r request, k kind) (auth.Decision, string) {
	if r.Verb != "update" && r.Verb != "patch" {
		return noOpinion("can only get/update/patch this type")
	}
	return related(g, r, k)
}

// serviceAccount allows get of a related service account (the kubelet's
// credential providers read it) and tokens for it.
func serviceAccount(g *Graph, r request) (auth.Decision, string) {
	if r.Verb == "get" && r.Subresource == "" {
		return readNamespaced(kindServiceAccount)(g, r)
	}
	if r.Verb != "create" || r.Name == "" {
		return noOpinion("can only create tokens for individual service accounts")
	}
	if r.Subresource != "token" {
		return noOpinion("can only create token subresource of serviceaccount")
	}
	return related(g, r, kindServiceAccount)
}

// selectsNode reports whether the request's field selector requires field
// to equal the node's name (with the operator "=").
func selectsNode(r request, field string) bool {
	for _, req := range r.FieldSelector {
		if req.Field == field && req.Operator == selection.Equals && req.Value == r.node {
			return true
		}
	}
	return false
}
