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
// Objects come from files (kubectl get -o yaml dumps, read an object at
// a time) or from a live cluster, page by page (read-only), and are put
// into the in-process server without admission just before their
// evaluation and taken out after it, so that no more than a page and the
// few objects being evaluated are held. What other objects' admission
// reads is seeded first: namespaces, CRDs and the objects that are params
// of the configuration's bindings, then the configuration; an object of
// the same kind and name as a seeded one takes its place for its own
// evaluation only, so that the report does not depend on the order of
// the objects (and lists them in kind, namespace and name order).
// Several workers evaluate objects
// side by side (pipeline.go) and their outcomes go into the report in the
// objects' order, so that it is the report of one worker. It is not
// `admitd replay` (recorded requests) nor a background scan in `admitd
// serve`.
package audit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
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
	// Workers evaluate objects side by side (default GOMAXPROCS). The
	// report is the same whatever their number.
	Workers int
}

// Source is where the objects audited come from.
type Source interface {
	// Seed are the objects the evaluation needs before the configuration
	// is created: namespaces (with their labels), CRDs, and the objects
	// that are params.
	Seed(ctx context.Context, params Params) ([]evaluate.Object, error)
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
	sched := newScheduling(o.Config)
	seed, err := src.Seed(ctx, sched.params)
	if err != nil {
		return nil, err
	}
	// the configuration's objects come last: they replace the objects of
	// the same kind and name, as applying the configuration would
	s, err := evaluate.StartSession(ctx, evaluate.SessionInput{Objects: append(seed, o.Config...), Responses: o.Responses, Server: o.Server})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	a := &auditor{s: s, o: o, report: newReport(operation(o)), skipped: map[string]string{}}
	workers := o.workers()
	p := newPipeline(ctx, workers, 4*workers, a.evaluate, a.apply)
	err = src.Each(ctx, func(page []evaluate.Object) error {
		for _, obj := range page {
			if err := p.submit(sched.task(obj)); err != nil {
				return err
			}
		}
		return nil
	})
	if perr := p.close(); err == nil {
		err = perr
	}
	if err != nil {
		return nil, err
	}
	a.report.Skipped = skippedGroupsSaid(a.skipped)
	if sk, ok := src.(interface{ Skipped() []string }); ok {
		a.report.Skipped = append(a.report.Skipped, sk.Skipped()...)
	}
	a.report.finish(s.SetupWarnings())
	return a.report, nil
}

// workers are o.Workers, else GOMAXPROCS; one when a webhook's recorded
// responses answer its calls in turn (which object gets which answer
// depends on the order of the calls).
func (o Options) workers() int {
	for _, r := range o.Responses {
		if !r.Every {
			return 1
		}
	}
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

func operation(o Options) string {
	if o.AsCreate {
		return evaluate.Create
	}
	return evaluate.Update
}

type auditor struct {
	s      *evaluate.Session
	o      Options
	report *Report
	// skipped are the groups of the objects skipped, with the reason.
	skipped map[string]string
}

// skippedGroupsSaid are the groups skipped with their reasons, in group
// order.
func skippedGroupsSaid(skipped map[string]string) []string {
	var out []string
	for _, group := range slices.Sorted(maps.Keys(skipped)) {
		out = append(out, group+": "+skipped[group])
	}
	return out
}

// outcome is what the evaluation of one object comes to: the group's
// reason when it is not audited, the result, or why it could not be
// evaluated; err (the in-process server failed) ends the audit.
type outcome struct {
	skip         string
	res          *evaluate.Result
	notEvaluated error
	err          error
}

// apply puts an outcome into the report; the pipeline calls it in the
// order of the objects.
func (a *auditor) apply(t task, out outcome) error {
	obj := t.obj
	switch {
	case out.skip != "":
		a.skipped[obj.GroupVersionKind().Group] = out.skip
	case out.notEvaluated != nil:
		a.report.notEvaluated(obj.Unstructured, obj.Source, out.notEvaluated)
	case out.res != nil:
		a.report.add(obj, out.res)
	}
	return nil
}

// evaluate evaluates one object; it may run beside the evaluations of
// other objects and touches nothing but the in-process server.
func (a *auditor) evaluate(ctx context.Context, t task) outcome {
	obj := t.obj
	gvk := obj.GroupVersionKind()
	if why, ok := skippedGroups[gvk.Group]; ok {
		return outcome{skip: why}
	}
	if obj.GetName() == "" {
		return outcome{notEvaluated: fmt.Errorf("no metadata.name")}
	}
	if a.o.AsCreate && !kept(gvk) {
		return a.create(ctx, obj)
	}
	return a.update(ctx, obj)
}

// kept are the kinds seeded for the others, evaluated as UPDATEs always
// and never taken out (the seeded object is put back after its
// evaluation; one the seed did not have stays).
func kept(gvk schema.GroupVersionKind) bool {
	return gvk.Group == "" && gvk.Kind == "Namespace" || gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition"
}

// seededKinds are the kinds, beyond the kept ones and the params, that
// the evaluation of other objects reads, so seeded for all of them:
// LimitRanges (LimitRanger), ResourceQuotas (with the usage they record:
// the CLI leaves the in-process quota controller off), ServiceAccounts
// (the ServiceAccount plugin refuses a pod of one that does not exist)
// and RBAC (the authorizer of the policies' CEL). Each is evaluated as
// any object (a CREATE with --as-create), its seeded self put back after.
var seededKinds = map[schema.GroupKind]bool{
	{Kind: "LimitRange"}: true, {Kind: "ResourceQuota"}: true, {Kind: "ServiceAccount"}: true,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}: true, {Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}: true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}: true, {Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: true,
}

// seeded says objects of gvk are seeded for the evaluation of the others.
func seeded(gvk schema.GroupVersionKind) bool {
	return kept(gvk) || seededKinds[gvk.GroupKind()]
}

// update evaluates obj as the UPDATE that re-applies it: put in (in
// place of the object of that name the session has), evaluated, and
// taken out (the session's object put back).
func (a *auditor) update(ctx context.Context, obj evaluate.Object) outcome {
	for try := 1; ; try++ {
		placed, stored, err := a.place(ctx, obj.Unstructured)
		if err != nil {
			return outcome{notEvaluated: fmt.Errorf("putting it into the evaluation: %w", err), err: a.release(ctx, obj, placed)}
		}
		res, err := a.s.Evaluate(ctx, evaluate.Request{Operation: evaluate.Update, Object: stored})
		rerr := a.release(ctx, obj, placed)
		switch {
		case err != nil:
			return outcome{notEvaluated: err, err: rerr}
		case rerr == nil && conflicted(res) && try < maxTries:
			continue // a controller of the in-process server wrote it meanwhile
		}
		return outcome{res: res, err: rerr}
	}
}

// maxTries bounds the evaluations of an object that conflict with a
// controller of the in-process server (the bootstrap configuration
// rewrites its FlowSchemas, the service-account controller makes the
// default ServiceAccount again).
const maxTries = 5

func conflicted(res *evaluate.Result) bool {
	return res.Decision == trace.Error && res.Status != nil && res.Status.Reason == metav1.StatusReasonConflict
}

func alreadyExists(res *evaluate.Result) bool {
	return res.Decision == trace.Error && res.Status != nil && res.Status.Reason == metav1.StatusReasonAlreadyExists
}

// place puts u in; a Service whose cluster IPs the in-process server
// cannot have (outside its range, or its own) goes in without them, and
// gets others.
func (a *auditor) place(ctx context.Context, u *unstructured.Unstructured) (*evaluate.Placement, *unstructured.Unstructured, error) {
	placed, stored, err := a.s.Place(ctx, u)
	if err == nil || u.GetKind() != "Service" || u.GroupVersionKind().Group != "" || !strings.Contains(err.Error(), "spec.clusterIP") {
		return placed, stored, err
	}
	u = u.DeepCopy()
	unstructured.RemoveNestedField(u.Object, "spec", "clusterIP")
	unstructured.RemoveNestedField(u.Object, "spec", "clusterIPs")
	return a.s.Place(ctx, u)
}

// create evaluates obj as its CREATE: the object of that name the session
// has is taken out for it, and put back after it.
func (a *auditor) create(ctx context.Context, obj evaluate.Object) outcome {
	for try := 1; ; try++ {
		vacated, err := a.s.Vacate(ctx, obj.Unstructured)
		var refused *evaluate.ConfigError
		switch {
		case errors.As(err, &refused):
			vacated = nil // a kind the server does not serve: the CREATE says so
		case err != nil:
			return outcome{notEvaluated: fmt.Errorf("making room for it: %w", err), err: a.release(ctx, obj, vacated)}
		}
		res, err := a.s.Evaluate(ctx, evaluate.Request{Operation: evaluate.Create, Object: obj.Unstructured})
		rerr := a.release(ctx, obj, vacated)
		switch {
		case err != nil:
			return outcome{notEvaluated: err, err: rerr}
		case rerr == nil && vacated != nil && vacated.Displaced() && alreadyExists(res) && try < maxTries:
			continue // a controller of the in-process server made its object again meanwhile
		}
		return outcome{res: res, err: rerr}
	}
}

// release takes obj out of the evaluation and puts back what it
// displaced; a namespace or CRD the session did not have stays, as if
// it had been seeded.
func (a *auditor) release(ctx context.Context, obj evaluate.Object, p *evaluate.Placement) error {
	if p == nil || !p.Displaced() && kept(obj.GroupVersionKind()) {
		return nil
	}
	if err := a.s.Release(ctx, p); err != nil {
		return fmt.Errorf("taking %s %s/%s out of the evaluation: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}
