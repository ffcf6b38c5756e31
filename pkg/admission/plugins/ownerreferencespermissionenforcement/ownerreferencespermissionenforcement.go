// Package ownerreferencespermissionenforcement is the
// OwnerReferencesPermissionEnforcement admission plugin (upstream's "gc"
// plugin): a user may change an object's owner references only if they may
// delete the object, and may make a reference block its owner's deletion
// (blockOwnerDeletion: true) only if they may update the owner's
// finalizers. It behaves as upstream 1.37, with the same authorization
// checks and messages.
//
// Owner kinds are mapped to resources through the server's schema, which
// must implement RESTMapper (the server's does). Pod status updates are not
// checked: the pod status strategy already keeps owner references
// unchanged. The plugin does not check that owners exist.
package ownerreferencespermissionenforcement

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/admitd/admitd/pkg/admission"
)

// Name is the upstream plugin name.
const Name = "OwnerReferencesPermissionEnforcement"

// RESTMapper maps a kind to the resources serving it, as a discovery-based
// meta.RESTMapper does. The plugin finds it on PluginContext.Schema.
type RESTMapper interface {
	RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error)
}

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		if pc.Authorizer == nil {
			return nil, errors.New("missing authorizer")
		}
		mapper, ok := pc.Schema.(RESTMapper)
		if !ok {
			return nil, errors.New("missing restMapper")
		}
		return New(pc.Authorizer, mapper), nil
	})
}

// Plugin is the OwnerReferencesPermissionEnforcement plugin.
type Plugin struct {
	authz  admission.Authorizer
	mapper RESTMapper
}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plugin asking authz and mapping owner kinds with mapper.
func New(authz admission.Authorizer, mapper RESTMapper) *Plugin {
	return &Plugin{authz: authz, mapper: mapper}
}

// Handles CREATE and UPDATE.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Validate refuses owner reference changes the user may not make.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Resource.Group == "" && a.Resource.Resource == "pods" && a.Subresource == "status" {
		return nil
	}
	if !changesOwnerReferences(a.Object, a.OldObject) {
		return nil
	}
	// Whoever creates an object may give it owners (they could have not
	// created it); changing them later takes the right to delete it.
	if a.Operation != admission.Create {
		d, reason, err := p.authz.Authorize(ctx, admission.AuthorizationAttributes{
			User: a.UserInfo, Verb: "delete", Namespace: a.Namespace,
			APIGroup: a.Resource.Group, APIVersion: a.Resource.Version, Resource: a.Resource.Resource,
			Subresource: a.Subresource, Name: a.Name, ResourceRequest: true,
		})
		if d != admission.AuthorizationAllow {
			return admission.NewForbidden(a, fmt.Errorf("cannot set an ownerRef on a resource you can't delete: %v, %v", reason, err))
		}
	}
	refs := newBlockingRefs(a.Object, a.OldObject)
	if len(refs) == 0 {
		return nil
	}
	// One check covers every owner before any kind is mapped.
	if d, _, _ := p.authz.Authorize(ctx, finalizeAnything(a)); d == admission.AuthorizationAllow {
		return nil
	}
	for _, ref := range refs {
		checks, err := p.finalizerChecks(ref, a)
		if err != nil {
			return admission.NewForbidden(a, fmt.Errorf("cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion %s Kind %s: %v", ref.APIVersion, ref.Kind, err))
		}
		// A kind served by several resources needs all of them.
		for _, c := range checks {
			d, reason, err := p.authz.Authorize(ctx, c)
			if d != admission.AuthorizationAllow {
				return admission.NewForbidden(a, fmt.Errorf("cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: %v, %v", reason, err))
			}
		}
	}
	return nil
}

// finalizeAnything is the check that the user may update the finalizers of
// every object.
func finalizeAnything(a *admission.Attributes) admission.AuthorizationAttributes {
	return admission.AuthorizationAttributes{
		User: a.UserInfo, Verb: "update", APIGroup: "*", APIVersion: "*", Resource: "*",
		Subresource: "finalizers", Name: "*", ResourceRequest: true,
	}
}

// finalizerChecks are the checks that the user may update the finalizers
// of ref's owner, one per resource its kind maps to. A namespaced owner is
// in the namespace of the request.
func (p *Plugin) finalizerChecks(ref metav1.OwnerReference, a *admission.Attributes) ([]admission.AuthorizationAttributes, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, err
	}
	mappings, err := p.mapper.RESTMappings(schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, gv.Version)
	if err != nil {
		return nil, err
	}
	var out []admission.AuthorizationAttributes
	for _, m := range mappings {
		c := admission.AuthorizationAttributes{
			User: a.UserInfo, Verb: "update", APIGroup: m.Resource.Group, APIVersion: m.Resource.Version,
			Resource: m.Resource.Resource, Subresource: "finalizers", Name: ref.Name, ResourceRequest: true,
		}
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			c.Namespace = a.Namespace
		}
		out = append(out, c)
	}
	return out, nil
}

// changesOwnerReferences reports whether obj has owner references that old
// did not have, position by position. Objects without metadata change none.
func changesOwnerReferences(obj, old runtime.Object) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	if old == nil {
		return len(m.GetOwnerReferences()) > 0
	}
	om, err := meta.Accessor(old)
	if err != nil {
		return false
	}
	refs, oldRefs := m.GetOwnerReferences(), om.GetOwnerReferences()
	if len(refs) != len(oldRefs) {
		return true
	}
	for i := range oldRefs {
		if !equality.Semantic.DeepEqual(oldRefs[i], refs[i]) {
			return true
		}
	}
	return false
}

// newBlockingRefs are obj's references that block owner deletion and did
// not in old: new UIDs, or blockOwnerDeletion previously unset or false.
func newBlockingRefs(obj, old runtime.Object) []metav1.OwnerReference {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	var blocking []metav1.OwnerReference
	for _, ref := range m.GetOwnerReferences() {
		if blocks(ref) {
			blocking = append(blocking, ref)
		}
	}
	if len(blocking) == 0 || old == nil {
		return blocking
	}
	om, err := meta.Accessor(old)
	if err != nil {
		return blocking
	}
	oldByUID := map[types.UID]metav1.OwnerReference{}
	for _, ref := range om.GetOwnerReferences() {
		oldByUID[ref.UID] = ref
	}
	var out []metav1.OwnerReference
	for _, ref := range blocking {
		if was, ok := oldByUID[ref.UID]; !ok || !blocks(was) {
			out = append(out, ref)
		}
	}
	return out
}

func blocks(ref metav1.OwnerReference) bool {
	return ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion
}
