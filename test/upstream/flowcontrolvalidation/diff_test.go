// Package flowcontrolvalidation compares admitd's FlowSchema and
// PriorityLevelConfiguration strategies (internal/registry: decoding
// defaults, then the preparation and validation of a create, an update or a
// write through /status) with kube-apiserver's: v1 defaulting
// (pkg/apis/flowcontrol/v1), then the strategies and status strategies of
// pkg/registry/flowcontrol through k8s.io/apiserver's rest.ValidateCreate
// and rest.ValidateUpdate, which add the common metadata checks and the
// declarative validation of 1.37 (DeclarativeValidationBeta on, as by
// default), on the internal objects kube-apiserver decodes.
//
// Compared: the defaulted object, the object as prepared for storage
// (status emptied on create, kept on update, spec and metadata kept on a
// status write, generation), and every error (type, field, detail,
// message) in order. On update kube-apiserver checks metadata several
// times (rest's common fields run a create and an update check, and the
// strategies check it again); admitd checks it once for every kind, so
// errors under metadata are compared as sets there.
package flowcontrolvalidation

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/flowcontrol/install"
	"k8s.io/kubernetes/pkg/registry/flowcontrol/flowschema"
	"k8s.io/kubernetes/pkg/registry/flowcontrol/prioritylevelconfiguration"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/test/upstream/internal/quietklog"
	"github.com/admitd/admitd/test/upstream/internal/updiff"
)

func TestMain(m *testing.M) {
	quietklog.SilenceErrors()
	os.Exit(m.Run())
}

// strategy is upstream's create and update strategy of one kind.
type strategy interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
}

// upstreamStrategies are the strategy and status strategy of obj's kind,
// with its resource and a new v1 object of its type.
func upstreamStrategies(obj runtime.Object) (main strategy, status rest.RESTUpdateStrategy, resource string, blank runtime.Object) {
	switch obj.(type) {
	case *flowcontrolv1.FlowSchema:
		return flowschema.Strategy, flowschema.StatusStrategy, "flowschemas", &flowcontrolv1.FlowSchema{}
	case *flowcontrolv1.PriorityLevelConfiguration:
		return prioritylevelconfiguration.Strategy, prioritylevelconfiguration.StatusStrategy, "prioritylevelconfigurations",
			&flowcontrolv1.PriorityLevelConfiguration{}
	}
	panic(fmt.Sprintf("not a flowcontrol object: %T", obj))
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
}

func requestContext(resource, subresource string, create bool) context.Context {
	verb := "update"
	if create {
		verb = "create"
	}
	return genericapirequest.WithRequestInfo(context.Background(), &genericapirequest.RequestInfo{IsResourceRequest: true,
		APIGroup: flowcontrolv1.GroupName, APIVersion: "v1", Resource: resource, Subresource: subresource, Verb: verb})
}

// upstream runs kube-apiserver's steps: v1 defaulting on decode (of the
// sent object only: the stored one was defaulted when written), then the
// strategy on the internal objects.
func upstream(t *testing.T, w write) outcome {
	t.Helper()
	obj := w.obj.DeepCopyObject()
	if w.defaulted {
		legacyscheme.Scheme.Default(obj)
	}
	main, status, resource, prepared := upstreamStrategies(obj)
	ctx := requestContext(resource, w.subresource(), w.old == nil)
	in := updiff.ToInternal(t, obj)
	var errs field.ErrorList
	switch {
	case w.old == nil:
		main.PrepareForCreate(ctx, in)
		errs = rest.ValidateCreate(ctx, in, main)
	default:
		var s rest.RESTUpdateStrategy = main
		if w.status {
			s = status
		}
		old := updiff.ToInternal(t, w.old)
		s.PrepareForUpdate(ctx, in, old)
		errs = rest.ValidateUpdate(ctx, in, old, s)
	}
	updiff.ToVersion(t, in, prepared)
	return outcome{defaulted: obj, prepared: prepared, errs: errs}
}

// ours runs admitd's: the catalogue's defaulting on decode, then the
// preparation and validation of the write, as the server does.
func ours(t *testing.T, cat *registry.Catalogue, w write) outcome {
	t.Helper()
	obj := w.obj.DeepCopyObject()
	kinds, _, err := registry.Scheme().ObjectKinds(obj)
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
	sent := obj.DeepCopyObject()
	var errs field.ErrorList
	if w.old == nil {
		errs = registry.PrepareCreate(res, obj)
	} else {
		old := w.old.DeepCopyObject()
		obj = registry.PrepareForUpdate(res, w.subresource(), obj, old)
		errs = res.ValidateSubresourceChange(w.subresource(), obj, old)
	}
	return outcome{defaulted: sent, prepared: obj, errs: errs}
}

// tally counts what the comparisons saw.
type tally struct {
	creates, updates, statusWrites, refused, accepted, mismatches int
	firstErrors                                                   map[string]int
}

func (c *tally) String() string {
	var lines []string
	for k, n := range c.firstErrors {
		lines = append(lines, fmt.Sprintf("  %5d refused first with %s", n, k))
	}
	slices.Sort(lines)
	return fmt.Sprintf("%d writes (%d creates, %d updates, %d status writes): %d refused, %d accepted, %d mismatches\n%s",
		c.creates+c.updates+c.statusWrites, c.creates, c.updates, c.statusWrites, c.refused, c.accepted, c.mismatches, strings.Join(lines, "\n"))
}

func (c *tally) count(w write, errs field.ErrorList) {
	switch {
	case w.old == nil:
		c.creates++
	case w.status:
		c.statusWrites++
	default:
		c.updates++
	}
	if len(errs) == 0 {
		c.accepted++
		return
	}
	c.refused++
	if c.firstErrors == nil {
		c.firstErrors = map[string]int{}
	}
	c.firstErrors[fmt.Sprintf("%s %s", errs[0].Type, updiff.Indexless(errs[0].Field))]++
}

func compare(t *testing.T, cat *registry.Catalogue, w write, c *tally) {
	t.Helper()
	up, our := upstream(t, w), ours(t, cat, w)
	c.count(w, up.errs)
	failed := false
	if d := cmp.Diff(up.defaulted, our.defaulted); d != "" {
		t.Errorf("%s: defaulted object differs (-upstream +admitd):\n%s", w.name, d)
		failed = true
	}
	// Internally an unset nominalConcurrencyShares of a limited level is
	// 0; only a defaulted object (as every client's is) has it set.
	if w.defaulted {
		clearTypeMeta(up.prepared, our.prepared)
		if d := cmp.Diff(up.prepared, our.prepared); d != "" {
			t.Errorf("%s: prepared object differs (-upstream +admitd):\n%s", w.name, d)
			failed = true
		}
	}
	u, o := updiff.Describe(up.errs, w.old != nil), updiff.Describe(our.errs, w.old != nil)
	if d := cmp.Diff(u, o); d != "" {
		t.Errorf("%s: errors differ (-upstream +admitd):\n%s\nsent: %+v\nold: %+v", w.name, d, w.obj, w.old)
		failed = true
	}
	if failed {
		c.mismatches++
	}
}

func clearTypeMeta(objs ...runtime.Object) {
	for _, o := range objs {
		o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	}
}
