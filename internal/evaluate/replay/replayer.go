package replay

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/admitd/admitd/internal/evaluate"
)

// replayer replays the events one after the other.
type replayer struct {
	cand, base *evaluate.Session
	report     *Report
	// present are the objects the sessions hold, by key; followed those
	// of them that the log or --objects gave (not the seeded namespaces
	// and ServiceAccounts, nor the in-process server's own objects).
	present, followed map[string]bool
	// since: requests received before it are followed, not replayed.
	since time.Time
	// createdLater are the namespaces seeded as a create later in the log
	// made them (Log.createdLater).
	createdLater map[string]*unstructured.Unstructured
}

// target is what a request acts on.
type target struct {
	gvr  schema.GroupVersionResource
	gvk  schema.GroupVersionKind
	ns   string
	name string
}

func (t target) key() string { return presentKey(t.gvk.GroupKind(), t.ns, t.name) }

func presentKey(gk schema.GroupKind, ns, name string) string {
	return gk.String() + " " + ns + "/" + name
}

// stub is an object of t's kind and name.
func (t target) stub() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(t.gvk)
	u.SetName(t.name)
	u.SetNamespace(t.ns)
	return u
}

// one replays ev and follows the cluster's state; errors returned end
// the replay (an in-process server failed).
func (r *replayer) one(ctx context.Context, ev *Event) error {
	ref := ev.Ref()
	if why := notReplayable(ev); why != "" {
		r.report.skip(why)
		return nil
	}
	gvr := schema.GroupVersionResource{Group: ev.ObjectRef.APIGroup, Version: ev.ObjectRef.APIVersion, Resource: ev.ObjectRef.Resource}
	gvk, err := r.cand.KindFor(gvr)
	if err != nil {
		r.report.notReplayed(ref, err.Error())
		return nil
	}
	t := target{gvr: gvr, gvk: gvk, ns: ev.namespace(), name: ev.ObjectRef.Name}
	if t.name == "" {
		t.name = recordedName(ev)
	}
	if time.Time(ev.RequestReceivedTimestamp).Before(r.since) {
		r.report.FollowedOnly++
		return r.follow(ctx, ev, t, nil)
	}
	q, note, err := r.request(ctx, ev, t)
	if err != nil {
		r.report.notReplayed(ref, err.Error())
		return nil
	}
	after, err := r.cand.Evaluate(ctx, q)
	if err == nil && unsupportedPatch(q, after) {
		q.PatchType = types.MergePatchType
		after, err = r.cand.Evaluate(ctx, q)
	}
	if err != nil {
		r.report.notReplayed(ref, err.Error())
		return r.follow(ctx, ev, t, nil)
	}
	if ownObject(ev, after) && !r.followed[t.key()] && r.seededEarly(t) {
		r.report.skip("creates of namespaces that requests earlier in the log are in (events are in the order requests completed): seeded as the create made them")
		return r.follow(ctx, ev, t, nil)
	}
	if ownObject(ev, after) && !r.followed[t.key()] {
		r.report.skip("creates of objects the in-process server has of its own (its bootstrap, the seeded namespaces' default ServiceAccounts)")
		return r.follow(ctx, ev, t, nil)
	}
	before := recorded(ev)
	if r.base != nil {
		res, err := r.base.Evaluate(ctx, q)
		if err != nil {
			r.report.notReplayed(ref, "baseline: "+err.Error())
			return r.follow(ctx, ev, t, after)
		}
		before = replayed(res)
	}
	r.report.compare(ref, ev.Verb, before, replayed(after), after, note)
	return r.follow(ctx, ev, t, after)
}

// seededEarly reports whether t is a namespace seeded as its create,
// later in the log, made it.
func (r *replayer) seededEarly(t target) bool {
	return t.gvk.Group == "" && t.gvk.Kind == "Namespace" && r.createdLater[t.name] != nil
}

// unsupportedPatch reports whether a strategic merge patch was refused
// as a custom resource refuses it.
func unsupportedPatch(q evaluate.Request, res *evaluate.Result) bool {
	return q.PatchType == types.StrategicMergePatchType && res.Status != nil && res.Status.Code == 415
}

// notReplayable says why ev is not replayed, or "".
func notReplayable(ev *Event) string {
	st := ev.ResponseStatus
	switch {
	case ev.ObjectRef.Subresource != "":
		return "requests on subresources (" + ev.ObjectRef.Subresource + ")"
	case configuration(ev.ObjectRef.APIGroup):
		return "requests on admission configurations (the candidate configuration stands for them)"
	case ev.code() == 401 || st != nil && st.Code == 403 && unauthorized(st.Message):
		return "requests refused before admission (authentication, authorization)"
	case st != nil && st.Code == 409 && st.Reason == "Conflict":
		return "requests refused for a stale resourceVersion"
	case st != nil && st.Code == 429:
		return "requests refused by API Priority and Fairness"
	case ev.Verb != "delete" && len(ev.RequestObject) == 0:
		return "requests without requestObject (audit level below Request)"
	case ev.ObjectRef.Name == "" && ev.Verb != "create":
		return "requests on collections (deletecollection)"
	}
	return ""
}

// unauthorized reports whether a 403's message is the authorizer's
// (`... is forbidden: User "u" cannot create resource ...`), not an
// admission denial's.
func unauthorized(msg string) bool {
	return strings.Contains(msg, `: User "`) && strings.Contains(msg, " cannot ") &&
		!strings.Contains(msg, "denied the request") && !strings.Contains(msg, "denied request")
}

// recordedName is the name a create gave: the stored object's (a
// generated name), else the one requested.
func recordedName(ev *Event) string {
	if u := decode(ev.ResponseObject); u != nil && u.GetName() != "" {
		return u.GetName()
	}
	if u := decode(ev.RequestObject); u != nil {
		return u.GetName()
	}
	return ""
}

// request is the dry run that replays ev, after the object it acts on is
// put in when the sessions do not hold it; note says how it differs from
// the recorded request.
func (r *replayer) request(ctx context.Context, ev *Event, t target) (evaluate.Request, string, error) {
	q := evaluate.Request{Resource: &t.gvr, Namespace: t.ns, DryRun: true, User: userOf(ev)}
	note := ""
	switch ev.Verb {
	case "create":
		obj := decode(ev.RequestObject)
		if obj == nil {
			return q, "", fmt.Errorf("the requestObject is not an object")
		}
		if obj.GetName() == "" && t.name != "" {
			obj.SetName(t.name) // the generated name, as admission saw it
		}
		q.Operation, q.Object = evaluate.Create, obj
		return q, "", nil
	case "update":
		obj := decode(ev.RequestObject)
		if obj == nil {
			return q, "", fmt.Errorf("the requestObject is not an object")
		}
		if !r.present[t.key()] && ev.code() != 201 { // 201: the update created it
			if err := r.put(ctx, t, obj); err != nil {
				return q, "", err
			}
			note = "the object's state before the request is not in the log nor --objects: replayed as an update of the new object"
		}
		q.Operation, q.Object = evaluate.Update, obj
		return q, note, nil
	case "patch":
		if !r.present[t.key()] && ev.code() != 201 { // 201: an apply that created it
			old := decode(ev.ResponseObject)
			if old == nil {
				return q, "", fmt.Errorf("the patched object's state before the request is not in the log nor --objects")
			}
			if err := r.put(ctx, t, old); err != nil {
				return q, "", err
			}
			note = "the object's state before the request is not in the log nor --objects: the patch applied to the recorded result"
		}
		q.Operation, q.Object = evaluate.Update, t.stub()
		q.Patch, q.PatchType = []byte(ev.RequestObject), patchType(ev, t)
		q.Options = fieldManager(ev)
		return q, note, nil
	}
	if !r.present[t.key()] {
		old := decode(ev.ResponseObject)
		if old == nil || old.GetKind() != t.gvk.Kind {
			return q, "", fmt.Errorf("the deleted object's state is not in the log nor --objects")
		}
		if err := r.put(ctx, t, old); err != nil {
			return q, "", err
		}
	}
	q.Operation, q.Object = evaluate.Delete, t.stub()
	q.Options = deleteOptions(ev)
	return q, "", nil
}

func userOf(ev *Event) evaluate.User {
	u := ev.User
	if ev.ImpersonatedUser != nil {
		u = *ev.ImpersonatedUser
	}
	extra := map[string][]string{}
	for k, v := range u.Extra {
		extra[k] = v
	}
	if len(extra) == 0 {
		extra = nil
	}
	return evaluate.User{Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra}
}

// put puts u into the sessions as t's stored object.
func (r *replayer) put(ctx context.Context, t target, u *unstructured.Unstructured) error {
	u = u.DeepCopy()
	u.SetGroupVersionKind(t.gvk)
	if t.ns != "" {
		u.SetNamespace(t.ns)
	}
	for _, s := range r.sessions() {
		if _, err := s.Preload(ctx, u); err != nil {
			return fmt.Errorf("putting %s %s into the evaluation: %w", t.gvk.Kind, t.name, err)
		}
		if t.gvk.Kind == "CustomResourceDefinition" && t.gvk.Group == "apiextensions.k8s.io" {
			if err := s.AwaitCRD(ctx, u); err != nil {
				return err
			}
		}
	}
	r.present[t.key()], r.followed[t.key()] = true, true
	return nil
}

// ownObject reports whether ev is a successful create that the replay
// finds already done.
func ownObject(ev *Event, res *evaluate.Result) bool {
	return ev.Verb == "create" && ev.succeeded() && res.Status != nil && res.Status.Reason == metav1.StatusReasonAlreadyExists
}

func (r *replayer) sessions() []*evaluate.Session {
	if r.base != nil {
		return []*evaluate.Session{r.cand, r.base}
	}
	return []*evaluate.Session{r.cand}
}

// follow makes the sessions hold what the cluster stored after ev: the
// recorded responseObject, or the replayed object when the log has none.
func (r *replayer) follow(ctx context.Context, ev *Event, t target, after *evaluate.Result) error {
	if !ev.succeeded() || ev.dryRun() {
		return nil
	}
	if ev.Verb == "delete" {
		if u := decode(ev.ResponseObject); u != nil && u.GetKind() == t.gvk.Kind && len(u.GetFinalizers()) > 0 {
			return r.keep(ctx, t, u) // deletion waits for finalizers
		}
		for _, s := range r.sessions() {
			if err := s.Remove(ctx, t.stub()); err != nil {
				return fmt.Errorf("following the recorded DELETE of %s %s: %w", t.gvk.Kind, t.name, err)
			}
		}
		delete(r.present, t.key())
		return nil
	}
	stored := decode(ev.ResponseObject)
	if stored == nil && after != nil && after.Object != nil {
		stored = &unstructured.Unstructured{Object: after.Object}
	}
	if stored == nil {
		return nil
	}
	return r.keep(ctx, t, stored)
}

// keep puts stored in; a refusal is reported (later requests on the
// object are replayed against what the sessions have).
func (r *replayer) keep(ctx context.Context, t target, stored *unstructured.Unstructured) error {
	if err := r.put(ctx, t, stored); err != nil {
		r.report.SetupWarnings = append(r.report.SetupWarnings, err.Error())
	}
	return nil
}
