package controllers

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/admissionsource"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/admission/policies"
	"github.com/admitd/admitd/pkg/admission/policyschema"
	"github.com/admitd/admitd/pkg/storage"
)

// PolicyStatus writes status.observedGeneration and status.typeChecking of
// ValidatingAdmissionPolicies whose generation is ahead of their status,
// as kube-controller-manager's validatingadmissionpolicy-status controller
// does: a server-side apply of the status, forced, through the API as its
// own user. Type checking needs schemas: custom resources take their CRD's,
// built-in kinds those of the builtin resolver (the OpenAPI schema of their
// Go type); a kind with neither is skipped, as upstream skips a kind whose
// schema cannot be found.
type PolicyStatus struct {
	store   storage.Store
	cat     *registry.Catalogue
	client  dynamic.Interface
	checker *policies.TypeChecker
	kick    chan struct{}
	log     *slog.Logger
}

// policyStatusManager is upstream's controller name, its field manager.
const policyStatusManager = "validatingadmissionpolicy-status"

// PolicyStatusUser is the user the controller's requests run as.
var PolicyStatusUser = ControllerUser(policyStatusManager + "-controller")

var validatingPoliciesGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies")

// NewPolicyStatus returns the controller; it reads policies from store and
// writes through client (as PolicyStatusUser).
func NewPolicyStatus(store storage.Store, cat *registry.Catalogue, client dynamic.Interface, builtin policies.SchemaResolver, log *slog.Logger) *PolicyStatus {
	p := &PolicyStatus{store: store, cat: cat, client: client, kick: make(chan struct{}, 1), log: log}
	schemas := firstSchema{crdSchemas{store: store, cat: cat}}
	if builtin != nil {
		schemas = append(schemas, builtin)
	}
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

// Run syncs on every change of a policy in storage, and every minute, until
// ctx ends.
func (p *PolicyStatus) Run(ctx context.Context) {
	if res, ok := p.cat.Lookup(validatingPoliciesGVR); ok {
		go follow(ctx, p.store, layout.ResourcePrefix(res), kicker{p}, p.log)
	}
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.kick:
		case <-t.C:
		}
		if err := p.Sync(ctx); err != nil {
			p.log.Warn("writing policy status", "err", err)
		}
	}
}

// kicker kicks a sync on every change it follows.
type kicker struct{ p *PolicyStatus }

func (k kicker) reset([]storage.KeyValue) { k.p.Kick() }
func (k kicker) event(storage.Event)      { k.p.Kick() }

// Sync writes the status of every policy whose generation is ahead.
func (p *PolicyStatus) Sync(ctx context.Context) error {
	res, ok := p.cat.Lookup(validatingPoliciesGVR)
	if !ok {
		return nil
	}
	_, objs, err := layout.List(ctx, p.store, res, 0)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		vap := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
		if vap.Generation <= vap.Status.ObservedGeneration {
			continue
		}
		// A policy deleted meanwhile is no error; other failures are
		// retried by the next sync.
		if err := p.applyStatus(ctx, vap); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// applyStatus applies the status of vap's generation.
func (p *PolicyStatus) applyStatus(ctx context.Context, vap *admissionregistrationv1.ValidatingAdmissionPolicy) error {
	status := map[string]any{"observedGeneration": vap.Generation, "typeChecking": map[string]any{}}
	if warnings := p.checker.Check(vap); len(warnings) > 0 {
		status["typeChecking"] = map[string]any{"expressionWarnings": warnings}
	}
	body, err := json.Marshal(map[string]any{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
		"metadata": map[string]any{"name": vap.Name}, "status": status})
	if err != nil {
		return err
	}
	_, err = p.client.Resource(validatingPoliciesGVR).Patch(ctx, vap.Name, types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: policyStatusManager, Force: ptr.To(true)}, "status")
	return err
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
	crd := admissionsource.CRDFor(c.store, c.cat, gvk)
	if crd == nil {
		return nil
	}
	return policyschema.CRDSchema(crd, gvk.Version)
}
