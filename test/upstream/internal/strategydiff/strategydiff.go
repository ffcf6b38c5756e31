// Package strategydiff runs one write (a create, an update or a status
// write, in v1 objects as a client sends them) through kube-apiserver's
// steps and through admitd's, and compares what they made of it: the
// defaulted object, the object as prepared for storage, every error
// (updiff.Describe, plus the fields whose errors come in map order,
// compared as a set) and the warnings (sorted).
//
// Upstream's steps: v1 defaulting on decode (of the sent object only),
// then the kind's strategy on the internal objects through
// k8s.io/apiserver's rest.ValidateCreate and rest.ValidateUpdate; admitd's:
// the catalogue's defaulting, then registry.PrepareCreate or
// PrepareForUpdate and ValidateSubresourceChange, as the server does.
package strategydiff

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/test/upstream/internal/updiff"
)

// Strategy is upstream's create and update strategy of one kind.
type Strategy interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
}

// Differ compares the writes of one API group's kinds.
type Differ struct {
	Group string
	// Strategy is upstream's strategy of obj's kind (its status strategy
	// for a status write), with its resource and a new v1 object of its
	// type.
	Strategy func(obj runtime.Object, status bool) (s Strategy, resource string, blank runtime.Object)
	// MapOrdered says which fields' errors both sides report in map order.
	MapOrdered func(field string) bool
	// Normalize, when set, makes what both sides set from their own clock
	// (a taint's timeAdded) equal before the objects are compared.
	Normalize func(upstream, admitd runtime.Object)
}

// Write is one create (Old nil), update or status write, in v1 objects
// as a client sends them; defaulted says whether decoding defaults apply
// (upstream's own validation tables hand their objects to validation as
// they are).
type Write struct {
	Name      string
	Obj, Old  runtime.Object
	Status    bool
	Defaulted bool
}

func (w Write) subresource() string {
	if w.Status {
		return "status"
	}
	return ""
}

// outcome is what one side made of a write.
type outcome struct {
	defaulted, prepared runtime.Object
	errs                field.ErrorList
	warnings            []string
}

func requestContext(group, resource, subresource string, create bool) context.Context {
	verb := "update"
	if create {
		verb = "create"
	}
	ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "admin"})
	return genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{IsResourceRequest: true,
		APIGroup: group, APIVersion: "v1", Resource: resource, Subresource: subresource, Verb: verb})
}

// upstream runs kube-apiserver's steps: v1 defaulting on decode (of the
// sent object only: the stored one was defaulted when written), then the
// strategy on the internal objects; warnings only for a valid write.
func (d Differ) upstream(t *testing.T, w Write) outcome {
	t.Helper()
	obj := w.Obj.DeepCopyObject()
	if w.Defaulted {
		legacyscheme.Scheme.Default(obj)
	}
	s, resource, prepared := d.Strategy(obj, w.Status)
	ctx := requestContext(d.Group, resource, w.subresource(), w.Old == nil)
	in := updiff.ToInternal(t, obj)
	var out outcome
	if w.Old == nil {
		s.PrepareForCreate(ctx, in)
		if out.errs = rest.ValidateCreate(ctx, in, s); len(out.errs) == 0 {
			out.warnings = s.WarningsOnCreate(ctx, in)
		}
	} else {
		old := updiff.ToInternal(t, w.Old)
		s.PrepareForUpdate(ctx, in, old)
		if out.errs = rest.ValidateUpdate(ctx, in, old, s); len(out.errs) == 0 && !w.Status {
			out.warnings = s.WarningsOnUpdate(ctx, in, old)
		}
	}
	updiff.ToVersion(t, in, prepared)
	out.defaulted, out.prepared = obj, prepared
	return out
}

// ours runs admitd's: the catalogue's defaulting on decode, then the
// preparation and validation of the write, as the server does.
func ours(t *testing.T, cat *registry.Catalogue, w Write) outcome {
	t.Helper()
	obj := w.Obj.DeepCopyObject()
	kinds, _, err := registry.Scheme().ObjectKinds(obj)
	if err != nil {
		t.Fatal(err)
	}
	res, ok := cat.LookupKind(kinds[0])
	if !ok {
		t.Fatalf("no resource for %v", kinds[0])
	}
	if w.Defaulted {
		res.Default(obj)
	}
	out := outcome{defaulted: obj.DeepCopyObject()}
	var old runtime.Object
	if w.Old == nil {
		out.errs = registry.PrepareCreate(res, obj)
	} else {
		old = w.Old.DeepCopyObject()
		obj = registry.PrepareForUpdate(res, w.subresource(), obj, old)
		out.errs = res.ValidateSubresourceChange(w.subresource(), obj, old)
	}
	if len(out.errs) == 0 && !w.Status {
		out.warnings = res.Warnings(obj, old)
	}
	out.prepared = obj
	return out
}

// Tally counts what the comparisons saw.
type Tally struct {
	Creates, Updates, StatusWrites, Refused, Accepted, Warned, Mismatches int
	FirstErrors                                                           map[string]int
}

func (c *Tally) String() string {
	var lines []string
	for k, n := range c.FirstErrors {
		lines = append(lines, fmt.Sprintf("  %5d refused first with %s", n, k))
	}
	slices.Sort(lines)
	return fmt.Sprintf("%d writes (%d creates, %d updates, %d status writes): %d refused, %d accepted (%d with warnings), %d mismatches\n%s",
		c.Creates+c.Updates+c.StatusWrites, c.Creates, c.Updates, c.StatusWrites, c.Refused, c.Accepted, c.Warned, c.Mismatches,
		strings.Join(lines, "\n"))
}

func (c *Tally) count(w Write, o outcome) {
	switch {
	case w.Old == nil:
		c.Creates++
	case w.Status:
		c.StatusWrites++
	default:
		c.Updates++
	}
	if len(o.errs) == 0 {
		c.Accepted++
		if len(o.warnings) > 0 {
			c.Warned++
		}
		return
	}
	c.Refused++
	if c.FirstErrors == nil {
		c.FirstErrors = map[string]int{}
	}
	kind := fmt.Sprintf("%T", w.Obj)[len("*v1."):]
	c.FirstErrors[fmt.Sprintf("%s %s %s", kind, o.errs[0].Type, updiff.Indexless(o.errs[0].Field))]++
}

// Compare runs w on both sides, counts it in c and reports a difference.
func (d Differ) Compare(t *testing.T, cat *registry.Catalogue, w Write, c *Tally) {
	t.Helper()
	up, our := d.upstream(t, w), ours(t, cat, w)
	c.count(w, up)
	if d.Normalize != nil {
		d.Normalize(up.defaulted, our.defaulted)
		d.Normalize(up.prepared, our.prepared)
	}
	var diffs []string
	if d := cmp.Diff(up.defaulted, our.defaulted); d != "" {
		diffs = append(diffs, "defaulted object:\n"+d)
	}
	clearTypeMeta(up.prepared, our.prepared)
	if d := cmp.Diff(up.prepared, our.prepared); d != "" {
		diffs = append(diffs, "prepared object:\n"+d)
	}
	if d := cmp.Diff(d.describe(up.errs, w.Old != nil), d.describe(our.errs, w.Old != nil)); d != "" {
		diffs = append(diffs, "errors:\n"+d)
	}
	slices.Sort(up.warnings)
	slices.Sort(our.warnings)
	if d := cmp.Diff(up.warnings, our.warnings); d != "" {
		diffs = append(diffs, "warnings:\n"+d)
	}
	if len(diffs) > 0 {
		c.Mismatches++
		t.Errorf("%s: differs (-upstream +admitd):\n%s\nsent: %+v\nold: %+v", w.Name, strings.Join(diffs, "\n"), w.Obj, w.Old)
	}
}

// described are a write's errors as compared: as updiff.Describe has them,
// but for the fields whose errors come in map order, compared as a set.
type described struct {
	updiff.Described
	MapOrdered []string
}

func (d Differ) describe(errs field.ErrorList, update bool) described {
	var rest, unordered field.ErrorList
	for _, e := range errs {
		if d.MapOrdered != nil && d.MapOrdered(e.Field) {
			unordered = append(unordered, e)
		} else {
			rest = append(rest, e)
		}
	}
	out := described{Described: updiff.Describe(rest, update)}
	for _, e := range unordered {
		out.MapOrdered = append(out.MapOrdered, e.Error())
	}
	slices.Sort(out.MapOrdered)
	return out
}

func clearTypeMeta(objs ...runtime.Object) {
	for _, o := range objs {
		o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	}
}
