// Package noderestriction is the NodeRestriction admission plugin: it limits
// what a kubelet, authenticated as system:node:<name> in group system:nodes,
// may write to the objects of its own node — its Node (no new taints,
// restricted labels or config source), the pods bound to it (mirror pods
// only, status and evictions), their PVCs' status, service-account tokens
// bound to its pods, its lease, CSINode, ResourceSlices, certificate
// signing requests and PodCertificateRequests. Requests of other users
// are admitted untouched.
//
// It behaves as upstream 1.37 with default feature gates, with the same
// messages. It reads cluster state through admission.ObjectLookup (the
// server's store) rather than informers, so it is never stale. It is not
// the Node authorizer, which decides what a node may read.
package noderestriction

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

// Name is the upstream plugin name.
const Name = "NodeRestriction"

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		if pc.Objects == nil {
			return nil, errors.New("missing object lookup")
		}
		if pc.Authorizer == nil {
			return nil, errors.New("missing authorizer")
		}
		return New(pc.Objects, pc.Authorizer), nil
	})
}

// Plugin is the NodeRestriction plugin.
type Plugin struct {
	objects admission.ObjectLookup
	authz   admission.Authorizer
}

var _ admission.Mutator = (*Plugin)(nil)

// New returns the plugin reading cluster state from objects and asking
// authz whether a node may request tokens for an audience or pod
// certificates for a signer its pod does not name.
func New(objects admission.ObjectLookup, authz admission.Authorizer) *Plugin {
	return &Plugin{objects: objects, authz: authz}
}

// Handles CREATE, UPDATE and DELETE.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update || op == admission.Delete
}

const (
	nodeUserPrefix = "system:node:"
	nodesGroup     = "system:nodes"
)

// nodeIdentity is the node name of a node user, and whether the user is a
// node at all (its name has the node prefix and it is in system:nodes).
func nodeIdentity(a *admission.Attributes) (string, bool) {
	u := a.UserInfo
	if !strings.HasPrefix(u.Username, nodeUserPrefix) {
		return "", false
	}
	for _, g := range u.Groups {
		if g == nodesGroup {
			return strings.TrimPrefix(u.Username, nodeUserPrefix), true
		}
	}
	return "", false
}

// Admit applies the rules for node users; it never changes the object.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	node, isNode := nodeIdentity(a)
	if !isNode {
		return nil
	}
	if node == "" {
		return forbidden(a, "could not determine node from user %q", a.UserInfo.Username)
	}
	r := &request{ctx: ctx, p: p, a: a, node: node}
	return r.admit()
}

// request is one node request being admitted.
type request struct {
	ctx  context.Context
	p    *Plugin
	a    *admission.Attributes
	node string
}

func (r *request) admit() error {
	switch r.a.Resource.GroupResource() {
	case schema.GroupResource{Resource: "pods"}:
		return r.admitPod()
	case schema.GroupResource{Resource: "nodes"}:
		return r.admitNode()
	case schema.GroupResource{Resource: "persistentvolumeclaims"}:
		if r.a.Subresource != "status" {
			return forbidden(r.a, "may only update PVC status")
		}
		return r.admitPVCStatus()
	case schema.GroupResource{Resource: "serviceaccounts"}:
		return r.admitServiceAccount()
	case schema.GroupResource{Group: "certificates.k8s.io", Resource: "podcertificaterequests"}:
		return r.admitPodCertificateRequest()
	case schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}:
		return r.admitLease()
	case schema.GroupResource{Group: "storage.k8s.io", Resource: "csinodes"}:
		return r.admitCSINode()
	case schema.GroupResource{Group: "resource.k8s.io", Resource: "resourceslices"}:
		return r.admitResourceSlice()
	case schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}:
		return r.admitCSR()
	}
	return nil
}

// forbidden is the plugin's 403 for the request.
func forbidden(a *admission.Attributes, format string, args ...any) error {
	return admission.NewForbidden(a, fmt.Errorf(format, args...))
}

// unexpectedType is the 403 for an object of a type the plugin does not
// know.
func unexpectedType(a *admission.Attributes, obj runtime.Object) error {
	return forbidden(a, "unexpected type %T", obj)
}

// getter is how a lister-backed lookup names a resource in its NotFound
// error: singular, as client-go's listers do.
type getter struct {
	gvr      schema.GroupVersionResource
	singular string
}

var (
	podGetter       = getter{schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "pod"}
	nodeGetter      = getter{schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, "node"}
	saGetter        = getter{schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, "serviceaccount"}
	pvcGetter       = getter{schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, "persistentvolumeclaim"}
	pvGetter        = getter{schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}, "persistentvolume"}
	csiDriverGetter = getter{schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "csidrivers"}, "csidriver"}
)

// get reads one object of type T; a missing one is the NotFound error an
// informer lister gives.
func get[T runtime.Object](r *request, g getter, namespace, name string) (T, error) {
	var zero T
	obj, err := r.p.objects.GetObject(r.ctx, g.gvr, namespace, name)
	if apierrors.IsNotFound(err) {
		return zero, apierrors.NewNotFound(schema.GroupResource{Group: g.gvr.Group, Resource: g.singular}, name)
	}
	if err != nil {
		return zero, err
	}
	t, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("unexpected type %T for %s %q", obj, g.singular, name)
	}
	return t, nil
}
