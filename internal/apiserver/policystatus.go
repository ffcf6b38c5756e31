package apiserver

import (
	"context"
	"encoding/json"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/admission/policies"
	"github.com/admitd/admitd/pkg/storage"
)

// PolicyStatus writes status.observedGeneration and status.typeChecking of
// ValidatingAdmissionPolicies whose generation is ahead of their status, as
// kube-controller-manager's status controller does, in the background.
// Type checking needs schemas: custom resources take their CRD's, built-in
// kinds the OpenAPI schema of their Go type (internal/openapi); a kind
// with neither is skipped, as upstream skips a kind whose schema cannot be
// found.
type PolicyStatus struct {
	store   storage.Store
	cat     *registry.Catalogue
	checker *policies.TypeChecker
	kick    chan struct{}
}

// NewPolicyStatus returns a status writer over store; call Run.
func NewPolicyStatus(store storage.Store, cat *registry.Catalogue) *PolicyStatus {
	p := &PolicyStatus{store: store, cat: cat, kick: make(chan struct{}, 1)}
	schemas := firstSchema{crdSchemas{store: store, cat: cat}, openAPIService(cat)}
	p.checker = &policies.TypeChecker{Schemas: schemas, KindsFor: p.kindsFor}
	return p
}

// Kick asks for a sync soon; it never blocks.
func (p *PolicyStatus) Kick() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Run syncs when kicked, and every minute, until ctx ends.
func (p *PolicyStatus) Run(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.kick:
		case <-t.C:
		}
		_ = p.Sync(ctx)
	}
}

// Sync writes the status of every policy whose generation is ahead.
func (p *PolicyStatus) Sync(ctx context.Context) error {
	res, ok := p.cat.Lookup(validatingPoliciesGVR)
	if !ok {
		return nil
	}
	kvs, objs, err := layout.List(ctx, p.store, res, 0)
	if err != nil {
		return err
	}
	for i, obj := range objs {
		kv := kvs[i]
		vap := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
		if vap.Generation <= vap.Status.ObservedGeneration {
			continue
		}
		vap.Status.ObservedGeneration = vap.Generation
		vap.Status.TypeChecking = &admissionregistrationv1.TypeChecking{ExpressionWarnings: p.checker.Check(vap)}
		data, err := layout.Encode(vap)
		if err != nil {
			return err
		}
		// A conflict means someone wrote meanwhile: the next sync retries.
		_, _ = p.store.Update(ctx, kv.Key, data, kv.ModRevision)
	}
	return nil
}

// NeedsSync reports whether a snapshot holds a policy whose status is
// behind its generation.
func NeedsSync(snap *policies.Snapshot) bool {
	for _, p := range snap.ValidatingPolicies {
		if p.Generation > p.Status.ObservedGeneration {
			return true
		}
	}
	return false
}

func (p *PolicyStatus) kindsFor(gvr schema.GroupVersionResource) []schema.GroupVersionKind {
	if res, ok := p.cat.Lookup(gvr); ok {
		return []schema.GroupVersionKind{res.GroupVersionKind()}
	}
	return nil
}

// firstSchema resolves a kind's schema with the first resolver that has
// one, as upstream combines its resolvers.
type firstSchema []policies.SchemaResolver

func (f firstSchema) ResolveSchema(gvk schema.GroupVersionKind) *spec.Schema {
	for _, r := range f {
		if s := r.ResolveSchema(gvk); s != nil {
			return s
		}
	}
	return nil
}

// crdSchemas resolves the schemas of custom resources: the version's
// openAPIV3Schema with apiVersion, kind and metadata at the top.
type crdSchemas struct {
	store storage.Store
	cat   *registry.Catalogue
}

func (c crdSchemas) ResolveSchema(gvk schema.GroupVersionKind) *spec.Schema {
	crd := crdFor(c.store, c.cat, gvk)
	if crd == nil {
		return nil
	}
	root := &spec.Schema{}
	for _, v := range crd.Spec.Versions {
		if v.Name != gvk.Version || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		raw, err := json.Marshal(v.Schema.OpenAPIV3Schema)
		if err != nil || json.Unmarshal(raw, root) != nil {
			return nil
		}
	}
	if root.Properties == nil {
		root.Properties = map[string]spec.Schema{}
	}
	root.Type = spec.StringOrArray{"object"}
	root.Properties["apiVersion"] = *spec.StringProperty()
	root.Properties["kind"] = *spec.StringProperty()
	root.Properties["metadata"] = objectMetaSchema()
	return root
}

// objectMetaSchema is the part of ObjectMeta expressions read.
func objectMetaSchema() spec.Schema {
	strs := spec.MapProperty(spec.StringProperty())
	props := map[string]spec.Schema{
		"labels": *strs, "annotations": *strs, "finalizers": *spec.ArrayProperty(spec.StringProperty()),
		"generation": *spec.Int64Property(), "deletionGracePeriodSeconds": *spec.Int64Property(),
		"creationTimestamp": *spec.DateTimeProperty(), "deletionTimestamp": *spec.DateTimeProperty(),
	}
	for _, s := range []string{"name", "generateName", "namespace", "uid", "resourceVersion"} {
		props[s] = *spec.StringProperty()
	}
	free := spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}}
	free.AddExtension("x-kubernetes-preserve-unknown-fields", true)
	props["ownerReferences"] = *spec.ArrayProperty(&free)
	props["managedFields"] = *spec.ArrayProperty(&free)
	return spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: props}}
}
