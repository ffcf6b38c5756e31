// Package clustertrustbundleattest is the ClusterTrustBundleAttest admission
// plugin: creating or updating a ClusterTrustBundle that names a signer is
// admitted only when the user may "attest" for that signer name (resource
// certificates.k8s.io signers, by name or by the signer domain's wildcard),
// as upstream 1.37 with the same messages. Updates that change only
// garbage-collection metadata (owner references, finalizers, managed fields)
// are not checked, so storage migration and the garbage collector keep
// working.
//
// It acts only while the ClusterTrustBundle feature gate is on, in any
// served version of the kind. It does not validate the bundle's contents.
package clustertrustbundleattest

import (
	"context"
	"errors"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1alpha1 "k8s.io/api/certificates/v1alpha1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/internal/signerauthz"
	"github.com/admitd/admitd/pkg/admission/plugins/internal/typename"
	"github.com/admitd/admitd/pkg/features"
)

// Name is the upstream plugin name.
const Name = "ClusterTrustBundleAttest"

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		if pc.Authorizer == nil {
			return nil, errors.New(Name + " requires an authorizer")
		}
		return New(pc.Authorizer, pc.Gates().Enabled(features.ClusterTrustBundle)), nil
	})
}

// Plugin is the ClusterTrustBundleAttest plugin.
type Plugin struct {
	authz   admission.Authorizer
	enabled bool
}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plugin asking authz; it admits everything unless enabled
// (the ClusterTrustBundle feature gate).
func New(authz admission.Authorizer, enabled bool) *Plugin {
	return &Plugin{authz: authz, enabled: enabled}
}

// Handles CREATE and UPDATE.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

var bundles = schema.GroupResource{Group: "certificates.k8s.io", Resource: "clustertrustbundles"}

// Concerns reports whether the gate is on and the request is on
// ClusterTrustBundles.
func (p *Plugin) Concerns(a *admission.Attributes) bool {
	return p.enabled && a.Resource.GroupResource() == bundles
}

// Validate refuses a bundle for a signer the user may not attest for.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if !p.Concerns(a) {
		return nil
	}
	signer, ok := signerName(a.Object)
	if !ok {
		// Upstream names the old object's type here.
		return admission.NewForbidden(a, fmt.Errorf("expected type ClusterTrustBundle, got: %s", typename.Of(a.OldObject)))
	}
	if signer == "" {
		return nil
	}
	if a.Operation == admission.Update && onlyGCFieldsChange(a.Object, a.OldObject) {
		return nil
	}
	if !signerauthz.Authorized(ctx, p.authz, a.UserInfo, "attest", signer) {
		return admission.NewForbidden(a, fmt.Errorf("user not permitted to attest for signerName %q", signer))
	}
	return nil
}

// signerName is the spec.signerName of a ClusterTrustBundle of any version.
func signerName(obj runtime.Object) (string, bool) {
	switch b := obj.(type) {
	case *certificatesv1.ClusterTrustBundle:
		return b.Spec.SignerName, true
	case *certificatesv1beta1.ClusterTrustBundle:
		return b.Spec.SignerName, true
	case *certificatesv1alpha1.ClusterTrustBundle:
		return b.Spec.SignerName, true
	}
	return "", false
}

// onlyGCFieldsChange reports whether obj equals old once its owner
// references, finalizers, self link and managed fields are old's.
func onlyGCFieldsChange(obj, old runtime.Object) bool {
	if old == nil {
		return false
	}
	oldMeta, err := meta.Accessor(old)
	if err != nil {
		return false
	}
	cp := obj.DeepCopyObject()
	m, err := meta.Accessor(cp)
	if err != nil {
		return false
	}
	m.SetOwnerReferences(oldMeta.GetOwnerReferences())
	m.SetFinalizers(oldMeta.GetFinalizers())
	m.SetSelfLink(oldMeta.GetSelfLink())
	m.SetManagedFields(oldMeta.GetManagedFields())
	// Upstream compares internal objects, whose type meta is never set;
	// ours may carry apiVersion and kind on one side only.
	cp.GetObjectKind().SetGroupVersionKind(old.GetObjectKind().GroupVersionKind())
	return equality.Semantic.DeepEqual(cp, old)
}
