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
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	admcel "github.com/admitd/admitd/pkg/admission/cel"
)

// Options are the dependencies of both webhook plugins.
type Options struct {
	// Source gives the current webhook configurations; nil: none.
	Source Source
	// Resolver finds the address of webhooks behind a Service reference.
	Resolver ServiceResolver
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Metrics receives the webhook metrics; nil records none.
	Metrics *admission.Metrics
	// CEL compiles matchConditions; by default both plugins share a new
	// compiler.
	CEL *admcel.Compiler
	// DefaultConfiguration and ValidateConfiguration apply the API's
	// defaults and create-time validation to static manifests.
	DefaultConfiguration  func(obj runtime.Object)
	ValidateConfiguration func(obj runtime.Object) error
}

// dispatcher holds what both plugins share.
type dispatcher struct {
	name       string
	source     Source
	clients    *clientCache
	schema     admission.Schema
	namespaces admission.NamespaceLookup
	metrics    *admission.Metrics
	authorizer admission.Authorizer
	cel        *admcel.Compiler
	log        *slog.Logger
	// static holds the plugin's static manifests (nil without a
	// staticManifestsDir); combined caches their union with the API set.
	static   *staticManifests
	combined atomic.Pointer[combined]
}

func newDispatcher(name string, o Options, pc admission.PluginContext) (*dispatcher, error) {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	cfg, err := loadPluginConfig(pc.Config)
	if err != nil {
		return nil, err
	}
	creds, err := loadCredentials(cfg.KubeConfigFile)
	if err != nil {
		return nil, err
	}
	d := &dispatcher{name: name, source: o.Source, clients: newClientCache(o.Resolver, creds), schema: pc.Schema,
		namespaces: pc.Namespaces, metrics: o.Metrics, authorizer: pc.Authorizer, cel: o.CEL, log: log}
	if cfg.StaticManifestsDir != "" {
		checks := manifestChecks{Default: o.DefaultConfiguration, Validate: o.ValidateConfiguration}
		if d.static, err = newStaticManifests(cfg.StaticManifestsDir, name == MutatingName, checks, log, d.reloadObserver()); err != nil {
			return nil, err
		}
		if pc.Context != nil {
			d.static.Watch(pc.Context, cfg.StaticManifestsDir)
		}
	}
	return d, nil
}

// Register adds both webhook plugins to r.
func Register(r *admission.Registry, o Options) {
	if o.Source == nil {
		o.Source = StaticSource{Snapshot: NewSnapshot(nil, nil)}
	}
	if o.CEL == nil {
		o.CEL = admcel.NewCompiler(admcel.Options{})
	}
	r.Register(MutatingName, func(pc admission.PluginContext) (admission.Handler, error) {
		d, err := newDispatcher(MutatingName, o, pc)
		if err != nil {
			return nil, err
		}
		return &Mutating{d}, nil
	})
	r.Register(ValidatingName, func(pc admission.PluginContext) (admission.Handler, error) {
		d, err := newDispatcher(ValidatingName, o, pc)
		if err != nil {
			return nil, err
		}
		return &Validating{d}, nil
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

// excludedVirtual reports requests no webhook ever sees.
func excludedVirtual(a *admission.Attributes) bool {
	return excludedResources[a.Resource.GroupResource()]
}

// onlyStatic reports requests for admission configuration objects, which
// only static-manifest webhooks may see.
func onlyStatic(a *admission.Attributes) bool {
	return a.Kind.Group == "admissionregistration.k8s.io" && excludedKinds[a.Kind.Kind]
}

// skip reports whether the dispatcher does nothing for the request.
func (d *dispatcher) skip(a *admission.Attributes) bool {
	return excludedVirtual(a) || (onlyStatic(a) && d.static == nil)
}

// observe records one webhook call in the request's admission trace and in
// the webhook metrics.
func (d *dispatcher) observe(a *admission.Attributes, h *hook, typ string, round int, start time.Time, err error, changed bool, detail *admission.StepDetail) {
	elapsed := time.Since(start)
	step := admission.Step{Plugin: d.name, Name: h.Name, Config: h.Config, Round: round, Matched: true,
		Mutated: changed, Duration: elapsed, Reason: "called", Detail: detail}
	code, errorType := 200, "no_error"
	var ce *callError
	var rj *rejection
	switch {
	case err == nil:
	case errors.As(err, &ce):
		code, errorType = int(ce.Code), "calling_webhook_error"
	case errors.As(err, &rj):
		code = int(rj.Status.ErrStatus.Code)
		step.Reason = "denied"
	default:
		code, errorType = 0, "apiserver_internal_error"
	}
	if err != nil {
		step.Err = err.Error()
		if rj == nil {
			step.Reason = "error"
		}
	}
	ignored := ce != nil && h.failOpen()
	detail.FailedOpen = ignored
	a.Record.AddStep(step)
	rejected := err != nil && !ignored
	d.metrics.ObserveWebhook(elapsed, rejected, a.Operation, typ, h.Name, code)
	if rejected && !errors.Is(err, context.Canceled) {
		d.metrics.ObserveWebhookRejection(h.Name, typ, a.Operation, errorType, code)
	}
}

func isCallError(err error) bool {
	var ce *callError
	return errors.As(err, &ce)
}

func internalError(err error) error { return apierrors.NewInternalError(err) }
