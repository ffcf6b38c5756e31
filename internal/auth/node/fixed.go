package node

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/admitd/admitd/internal/auth"
)

// lease allows a node its own lease in kube-node-lease. A create is allowed
// whatever the name: the NodeRestriction admission plugin checks it.
func lease(_ *Graph, r request) (auth.Decision, string) {
	switch r.Verb {
	case "get", "create", "update", "patch", "delete":
	default:
		return noOpinion("can only get, create, update, patch, or delete a node lease")
	}
	if r.Namespace != corev1.NamespaceNodeLease {
		return noOpinion(fmt.Sprintf("can only access leases in the %q system namespace", corev1.NamespaceNodeLease))
	}
	if r.Verb != "create" && r.Name != r.node {
		return noOpinion("can only access node lease with the same name as the requesting node")
	}
	return allow()
}

// csiNode allows a node its own CSINode. The status subresource needs the
// CSIVolumeHealth feature, off by default.
func csiNode(_ *Graph, r request) (auth.Decision, string) {
	switch r.Subresource {
	case "":
		switch r.Verb {
		case "get", "create", "update", "patch", "delete":
		default:
			return noOpinion("can only get, create, update, patch, or delete a CSINode")
		}
	case "status":
		return noOpinion("CSINode status access requires CSIVolumeHealth feature")
	default:
		return noOpinion("cannot authorize CSINode subresources")
	}
	if r.Verb != "create" && r.Name != r.node {
		return noOpinion("can only access CSINode with the same name as the requesting node")
	}
	return allow()
}

// resourceSlice allows creates (NodeRestriction checks spec.nodeName),
// access to the slices of the node, and lists selecting them.
func resourceSlice(g *Graph, r request) (auth.Decision, string) {
	if r.Subresource != "" {
		return noOpinion("cannot authorize ResourceSlice subresources")
	}
	switch r.Verb {
	case "create":
		return allow()
	case "get", "update", "patch", "delete":
		return related(g, r, kindResourceSlice)
	case "watch", "list", "deletecollection":
		if selectsNode(r, "spec.nodeName") {
			return allow()
		}
		return noOpinion("can only list/watch/deletecollection resourceslices with nodeName field selector")
	}
	return noOpinion("only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection")
}

// podCertificateRequest allows creates (NodeRestriction checks them), get
// of the node's requests and lists selecting them.
func podCertificateRequest(g *Graph, r request) (auth.Decision, string) {
	if r.Subresource != "" {
		return noOpinion("nodes may not access the status subresource of PodCertificateRequests")
	}
	switch r.Verb {
	case "create":
		return allow()
	case "get":
		return related(g, r, kindPodCertificateRequest)
	case "list", "watch":
		if selectsNode(r, "spec.nodeName") {
			return allow()
		}
		return noOpinion("can only list/watch podcertificaterequests with nodeName field selector")
	}
	return noOpinion(fmt.Sprintf("nodes may not %s podcertificaterequests", r.Verb))
}

// nodeObject allows writes of Node objects and their status (NodeRestriction
// limits them to the node's own) and reads of the node's own, compared by
// name so that a kubelet can read it before creating it.
func nodeObject(_ *Graph, r request) (auth.Decision, string) {
	switch r.Subresource {
	case "":
		switch r.Verb {
		case "create", "update", "patch":
			return allow()
		case "get", "list", "watch":
			switch r.Name {
			case r.node:
				return allow()
			case "":
				return noOpinion(fmt.Sprintf("node '%s' cannot read all nodes, only its own Node object", r.node))
			}
			return noOpinion(fmt.Sprintf("node '%s' cannot read '%s', only its own Node object", r.node, r.Name))
		}
	case "status":
		if r.Verb == "update" || r.Verb == "patch" {
			return allow()
		}
	}
	return noOpinion("")
}

// pod allows reads of the node's pods, lists selecting them, mirror pod
// creates and deletes, status updates and evictions (NodeRestriction limits
// the writes to the node's own pods).
func pod(g *Graph, r request) (auth.Decision, string) {
	switch r.Subresource {
	case "":
		switch r.Verb {
		case "get":
			return related(g, r, kindPod)
		case "list", "watch":
			if selectsNode(r, "spec.nodeName") {
				return allow()
			}
			if r.Name != "" {
				return related(g, r, kindPod)
			}
			return noOpinion("can only list/watch pods with spec.nodeName field selector")
		case "create", "delete":
			return allow()
		}
	case "status":
		if r.Verb == "update" || r.Verb == "patch" {
			return allow()
		}
	case "eviction":
		if r.Verb == "create" {
			return allow()
		}
	}
	return noOpinion("")
}
