// Package volumevalidation compares admitd's VolumeAttachment and
// VolumeAttributesClass strategies (internal/registry: decoding defaults,
// then the preparation and validation of a create, an update or an
// attachment's status write) with kube-apiserver's: v1 defaulting
// (pkg/apis/storage/v1), then the strategies of
// pkg/registry/storage/{volumeattachment,volumeattributesclass} (and the
// attachment's status strategy) through k8s.io/apiserver's
// rest.ValidateCreate and rest.ValidateUpdate, which add the common
// metadata checks and 1.37's declarative validation (VolumeAttachment has
// enforced beta rules), on the internal objects kube-apiserver decodes,
// with every feature gate at its default.
//
// Compared: the defaulted object, the object as prepared for storage, every
// error (type, field, detail, message; in order, but for metadata errors
// on update, compared as sets as upstream checks metadata several times,
// and for parameters errors, which come in map order) and the warnings
// (none on either side). Inline volume specs are left out: admitd does
// not validate PersistentVolume specs.
package volumevalidation

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	"k8s.io/kubernetes/pkg/registry/storage/volumeattachment"
	"k8s.io/kubernetes/pkg/registry/storage/volumeattributesclass"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/test/upstream/internal/quietklog"
	"github.com/admitd/admitd/test/upstream/internal/updiff"
)

func TestMain(m *testing.M) {
	// Declarative validation logs, as errors, every mismatch it finds
	// between its errors and the handwritten ones.
	quietklog.Silence()
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("stderrthreshold", "FATAL")
	os.Exit(m.Run())
}

// strategy is upstream's create and update strategy of one kind.
type strategy interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
}

// upstreamStrategy is the strategy of obj's kind (its status strategy for a
// status write), with its resource and a new v1 object of its type.
func upstreamStrategy(obj runtime.Object, status bool) (s strategy, resource string, blank runtime.Object) {
	switch obj.(type) {
	case *storagev1.VolumeAttachment:
		if status {
			return volumeattachment.StatusStrategy, "volumeattachments", &storagev1.VolumeAttachment{}
		}
		return volumeattachment.Strategy, "volumeattachments", &storagev1.VolumeAttachment{}
	case *storagev1.VolumeAttributesClass:
		return volumeattributesclass.Strategy, "volumeattributesclasses", &storagev1.VolumeAttributesClass{}
	}
	panic(fmt.Sprintf("not a volume object: %T", obj))
}

// write is one create (old nil), update or status write, in v1 objects
// as a client sends them; defaulted says whether decoding defaults apply
// (upstream's own validation tables hand their objects to validation as
// they are).
type write struct {
	name      string
	obj, old  runtime.Object
	status    bool
	defaulted bool
}

func (w write) subresource() string {
	if w.status {
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

func requestContext(resource, subresource string, create bool) context.Context {
	verb := "update"
	if create {
		verb = "create"
	}
	return genericapirequest.WithRequestInfo(context.Background(), &genericapirequest.RequestInfo{IsResourceRequest: true,
		APIGroup: storagev1.GroupName, APIVersion: "v1", Resource: resource, Subresource: subresource, Verb: verb})
}

// upstream runs kube-apiserver's steps: v1 defaulting on decode (of the
// sent object only: the stored one was defaulted when written), then the
// strategy on the internal objects; warnings only for a valid write.
func upstream(t *testing.T, w write) outcome {
	t.Helper()
	obj := w.obj.DeepCopyObject()
	if w.defaulted {
		legacyscheme.Scheme.Default(obj)
	}
	s, resource, prepared := upstreamStrategy(obj, w.status)
	ctx := requestContext(resource, w.subresource(), w.old == nil)
	in := updiff.ToInternal(t, obj)
	var out outcome
	if w.old == nil {
		s.PrepareForCreate(ctx, in)
		if out.errs = rest.ValidateCreate(ctx, in, s); len(out.errs) == 0 {
			out.warnings = s.WarningsOnCreate(ctx, in)
		}
	} else {
		old := updiff.ToInternal(t, w.old)
		s.PrepareForUpdate(ctx, in, old)
		if out.errs = rest.ValidateUpdate(ctx, in, old, s); len(out.errs) == 0 && !w.status {
			out.warnings = s.WarningsOnUpdate(ctx, in, old)
		}
	}
	updiff.ToVersion(t, in, prepared)
	out.defaulted, out.prepared = obj, prepared
	return out
}

// ours runs admitd's: the catalogue's defaulting on decode, then the
// preparation and validation of the write, as the server does.
func ours(t *testing.T, cat *registry.Catalogue, w write) outcome {
	t.Helper()
	obj := w.obj.DeepCopyObject()
	kinds, _, err := registry.Scheme.ObjectKinds(obj)
	if err != nil {
		t.Fatal(err)
	}
	res, ok := cat.LookupKind(kinds[0])
	if !ok {
		t.Fatalf("no resource for %v", kinds[0])
	}
	if w.defaulted {
		res.Default(obj)
	}
	out := outcome{defaulted: obj.DeepCopyObject()}
	var old runtime.Object
	if w.old == nil {
		out.errs = registry.PrepareCreate(res, obj)
	} else {
		old = w.old.DeepCopyObject()
		obj = registry.PrepareForUpdate(res, w.subresource(), obj, old)
		out.errs = res.ValidateSubresourceChange(w.subresource(), obj, old)
	}
	if len(out.errs) == 0 && !w.status {
		out.warnings = res.Warnings(obj, old)
	}
	out.prepared = obj
	return out
}

// tally counts what the comparisons saw.
type tally struct {
	creates, updates, statusWrites, refused, accepted, warned, mismatches int
	firstErrors                                                           map[string]int
}

func (c *tally) String() string {
	var lines []string
	for k, n := range c.firstErrors {
		lines = append(lines, fmt.Sprintf("  %5d refused first with %s", n, k))
	}
	slices.Sort(lines)
	return fmt.Sprintf("%d writes (%d creates, %d updates, %d status writes): %d refused, %d accepted (%d with warnings), %d mismatches\n%s",
		c.creates+c.updates+c.statusWrites, c.creates, c.updates, c.statusWrites, c.refused, c.accepted, c.warned, c.mismatches,
		strings.Join(lines, "\n"))
}

func (c *tally) count(w write, o outcome) {
	switch {
	case w.old == nil:
		c.creates++
	case w.status:
		c.statusWrites++
	default:
		c.updates++
	}
	if len(o.errs) == 0 {
		c.accepted++
		if len(o.warnings) > 0 {
			c.warned++
		}
		return
	}
	c.refused++
	if c.firstErrors == nil {
		c.firstErrors = map[string]int{}
	}
	kind := fmt.Sprintf("%T", w.obj)[len("*v1."):]
	c.firstErrors[fmt.Sprintf("%s %s %s", kind, o.errs[0].Type, updiff.Indexless(o.errs[0].Field))]++
}

func compare(t *testing.T, cat *registry.Catalogue, w write, c *tally) {
	t.Helper()
	up, our := upstream(t, w), ours(t, cat, w)
	c.count(w, up)
	var diffs []string
	if d := cmp.Diff(up.defaulted, our.defaulted); d != "" {
		diffs = append(diffs, "defaulted object:\n"+d)
	}
	clearTypeMeta(up.prepared, our.prepared)
	if d := cmp.Diff(up.prepared, our.prepared); d != "" {
		diffs = append(diffs, "prepared object:\n"+d)
	}
	if d := cmp.Diff(describe(up.errs, w.old != nil), describe(our.errs, w.old != nil)); d != "" {
		diffs = append(diffs, "errors:\n"+d)
	}
	slices.Sort(up.warnings)
	slices.Sort(our.warnings)
	if d := cmp.Diff(up.warnings, our.warnings); d != "" {
		diffs = append(diffs, "warnings:\n"+d)
	}
	if len(diffs) > 0 {
		c.mismatches++
		t.Errorf("%s: differs (-upstream +admitd):\n%s\nsent: %+v\nold: %+v", w.name, strings.Join(diffs, "\n"), w.obj, w.old)
	}
}

// described are a write's errors as compared: as updiff.Describe has them,
// but for a class's parameters errors, which both sides report in map
// order and are compared as a set.
type described struct {
	updiff.Described
	MatchLabels []string
}

func describe(errs field.ErrorList, update bool) described {
	var rest, labels field.ErrorList
	for _, e := range errs {
		if e.Field == "parameters" {
			labels = append(labels, e)
		} else {
			rest = append(rest, e)
		}
	}
	out := described{Described: updiff.Describe(rest, update)}
	for _, e := range labels {
		out.MatchLabels = append(out.MatchLabels, e.Error())
	}
	slices.Sort(out.MatchLabels)
	return out
}

func clearTypeMeta(objs ...runtime.Object) {
	for _, o := range objs {
		o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	}
}
