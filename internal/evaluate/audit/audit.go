// Package audit is `admitd audit`: what a candidate admission
// configuration (webhook configurations, ValidatingAdmissionPolicies,
// MutatingAdmissionPolicies and their bindings) would do to objects that
// already exist. Each object is evaluated by an in-process admitd with the
// candidate configuration (internal/evaluate's Session: the same chain as
// `admitd serve`, webhooks called or answered from recorded responses) as
// the UPDATE that re-applies it unchanged, or as its CREATE; the report
// says, per webhook and per policy and binding, which objects it would
// deny, warn about, audit-annotate, mutate (with the patch) or fail on.
//
// Objects come from files (kubectl get -o yaml dumps) or from a live
// cluster, page by page (read-only), and are put into the in-process
// server without admission just before their evaluation and taken out
// after it, so that no more than a page is held. It is not `admitd
// replay` (recorded requests) nor a background scan in `admitd serve`.
package audit

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/evaluate"
	"github.com/admitd/admitd/pkg/admission/trace"
)

// Options are an audit's configuration.
type Options struct {
	// Config is the candidate configuration, with whatever it needs
	// (params, namespaces): created as `admitd eval` creates its files.
	Config []evaluate.Object
	// Responses answer webhooks from recorded responses (nil: none).
	Responses evaluate.Responses
	Server    evaluate.ServerConfig
	// AsCreate evaluates each object as its CREATE instead of the UPDATE
	// that re-applies it.
	AsCreate bool
}

// Source is where the objects audited come from.
type Source interface {
	// Seed are the objects the evaluation needs before the configuration
	// is created: namespaces (with their labels) and CRDs.
	Seed(ctx context.Context) ([]evaluate.Object, error)
	// Each calls fn with the objects to audit, a page at a time.
	Each(ctx context.Context, fn func([]evaluate.Object) error) error
}

// skippedGroups are API groups whose objects are not audited: put into the
// in-process server, the cluster's own webhook configurations and
// policies would join the candidate configuration, and its APIServices
// would be proxied to.
var skippedGroups = map[string]string{
	"admissionregistration.k8s.io": "admission configurations (they would become part of the configuration under audit)",
	"apiregistration.k8s.io":       "APIServices (the in-process server would proxy to them)",
}

// Run audits the objects of src through o's configuration.
func Run(ctx context.Context, src Source, o Options) (*Report, error) {
	seed, err := src.Seed(ctx)
	if err != nil {
		return nil, err
	}
	s, err := evaluate.StartSession(ctx, evaluate.SessionInput{Objects: append(seed, o.Config...), Responses: o.Responses, Server: o.Server})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	a := &auditor{s: s, o: o, report: newReport(operation(o)), skipped: map[string]bool{}}
	if err := src.Each(ctx, func(page []evaluate.Object) error { return a.page(ctx, page) }); err != nil {
		return nil, err
	}
	if sk, ok := src.(interface{ Skipped() []string }); ok {
		a.report.Skipped = append(a.report.Skipped, sk.Skipped()...)
	}
	a.report.finish(s.SetupWarnings())
	return a.report, nil
}

func operation(o Options) string {
	if o.AsCreate {
		return evaluate.Create
	}
	return evaluate.Update
}

type auditor struct {
	s       *evaluate.Session
	o       Options
	report  *Report
	skipped map[string]bool
}

func (a *auditor) page(ctx context.Context, objs []evaluate.Object) error {
	for _, obj := range objs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := a.one(ctx, obj); err != nil {
			return err
		}
	}
	return nil
}

// one evaluates obj; errors returned end the audit (the in-process server
// failed), refusals of obj are in the report.
func (a *auditor) one(ctx context.Context, obj evaluate.Object) error {
	gvk := obj.GroupVersionKind()
	if why, ok := skippedGroups[gvk.Group]; ok {
		if !a.skipped[gvk.Group] {
			a.skipped[gvk.Group] = true
			a.report.Skipped = append(a.report.Skipped, gvk.Group+": "+why)
		}
		return nil
	}
	if obj.GetName() == "" {
		a.report.notEvaluated(obj.Unstructured, obj.Source, fmt.Errorf("no metadata.name"))
		return nil
	}
	if a.o.AsCreate && !kept(gvk) {
		return a.create(ctx, obj)
	}
	return a.update(ctx, obj)
}

// kept are the kinds seeded for the others, evaluated as UPDATEs always
// and never taken out.
func kept(gvk schema.GroupVersionKind) bool {
	return gvk.Group == "" && gvk.Kind == "Namespace" || gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition"
}

func (a *auditor) update(ctx context.Context, obj evaluate.Object) error {
	for try := 1; ; try++ {
		stored, err := a.preload(ctx, obj.Unstructured)
		if err != nil {
			a.report.notEvaluated(obj.Unstructured, obj.Source, fmt.Errorf("putting it into the evaluation: %w", err))
			break
		}
		res, err := a.s.Evaluate(ctx, evaluate.Request{Operation: evaluate.Update, Object: stored})
		if err != nil {
			a.report.notEvaluated(obj.Unstructured, obj.Source, err)
			break
		}
		if conflicted(res) && try < maxTries {
			continue // a controller of the in-process server wrote it meanwhile
		}
		a.report.add(obj, res)
		break
	}
	return a.unload(ctx, obj.Unstructured)
}

// maxTries bounds the evaluations of an object that conflict with a
// controller of the in-process server (the bootstrap configuration
// rewrites its FlowSchemas).
const maxTries = 5

func conflicted(res *evaluate.Result) bool {
	return res.Decision == trace.Error && res.Status != nil && res.Status.Reason == metav1.StatusReasonConflict
}

// preload puts u in; a Service whose cluster IPs the in-process server
// cannot have (outside its range, or its own) goes in without them, and
// gets others.
func (a *auditor) preload(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	stored, err := a.s.Preload(ctx, u)
	if err == nil || u.GetKind() != "Service" || u.GroupVersionKind().Group != "" || !strings.Contains(err.Error(), "spec.clusterIP") {
		return stored, err
	}
	u = u.DeepCopy()
	unstructured.RemoveNestedField(u.Object, "spec", "clusterIP")
	unstructured.RemoveNestedField(u.Object, "spec", "clusterIPs")
	return a.s.Preload(ctx, u)
}

func (a *auditor) create(ctx context.Context, obj evaluate.Object) error {
	res, err := a.s.Evaluate(ctx, evaluate.Request{Operation: evaluate.Create, Object: obj.Unstructured})
	if err != nil {
		a.report.notEvaluated(obj.Unstructured, obj.Source, err)
		return nil
	}
	a.report.add(obj, res)
	return a.unload(ctx, obj.Unstructured)
}

func (a *auditor) unload(ctx context.Context, u *unstructured.Unstructured) error {
	if kept(u.GroupVersionKind()) {
		return nil
	}
	if err := a.s.Unload(ctx, u); err != nil {
		return fmt.Errorf("taking %s %s/%s out of the evaluation: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return nil
}
