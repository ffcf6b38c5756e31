// Package webhooks implements the MutatingAdmissionWebhook and
// ValidatingAdmissionWebhook plugins: matching requests against webhook
// configurations, calling webhooks with AdmissionReview v1 or v1beta1 over
// HTTPS, verifying their answers, applying patches, and recording audit
// annotations, warnings and trace steps, all as upstream Kubernetes 1.37.
//
// Configurations come from a Source (a snapshot that the server keeps up to
// date); the package never reads storage itself.
package webhooks

import (
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

// Options are the dependencies of both webhook plugins.
type Options struct {
	// Source gives the current webhook configurations.
	Source Source
	// Resolver finds the address of webhooks behind a Service reference.
	Resolver ServiceResolver
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// dispatcher holds what both plugins share.
type dispatcher struct {
	name       string
	source     Source
	clients    *clientCache
	schema     admission.Schema
	namespaces admission.NamespaceLookup
	log        *slog.Logger
}

func newDispatcher(name string, o Options, pc admission.PluginContext) *dispatcher {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	return &dispatcher{name: name, source: o.Source, clients: newClientCache(o.Resolver), schema: pc.Schema, namespaces: pc.Namespaces, log: log}
}

// Register adds both webhook plugins to r.
func Register(r *admission.Registry, o Options) {
	r.Register(MutatingName, func(pc admission.PluginContext) (admission.Handler, error) {
		return &Mutating{newDispatcher(MutatingName, o, pc)}, nil
	})
	r.Register(ValidatingName, func(pc admission.PluginContext) (admission.Handler, error) {
		return &Validating{newDispatcher(ValidatingName, o, pc)}, nil
	})
}

// excludedKinds are never sent to API-configured webhooks, so that a
// cluster cannot lock itself out of its own admission configuration.
var excludedKinds = map[string]bool{
	"ValidatingWebhookConfiguration": true, "MutatingWebhookConfiguration": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
	"MutatingAdmissionPolicy": true, "MutatingAdmissionPolicyBinding": true,
}

// excludedResources are virtual review resources no webhook ever sees.
var excludedResources = map[schema.GroupResource]bool{
	{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}:       true,
	{Group: "authentication.k8s.io", Resource: "tokenreviews"}:             true,
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}: true,
	{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}:  true,
	{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"}:   true,
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}:      true,
}

func excludedRequest(a *admission.Attributes) bool {
	if excludedResources[a.Resource.GroupResource()] {
		return true
	}
	return a.Kind.Group == "admissionregistration.k8s.io" && excludedKinds[a.Kind.Kind]
}

// trace records one webhook call in the request's admission trace.
func (d *dispatcher) trace(a *admission.Attributes, h *Hook, round int, mutating, changed bool, start time.Time, err error) {
	step := admission.Step{Plugin: d.name, Name: h.Name, Config: h.Config, Round: round, Matched: true,
		Mutated: changed, Duration: time.Since(start)}
	if err != nil {
		step.Err = err.Error()
	}
	a.Record.AddStep(step)
}

func internalError(err error) error { return apierrors.NewInternalError(err) }

func fromAPIVersionAndKind(apiVersion, kind string) schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(apiVersion, kind)
}
