// Package corevalidation compares admitd's strategies of ResourceQuota,
// LimitRange, ControllerRevision and Event (internal/registry: decoding
// defaults, then the preparation and validation of a create, an update or
// a ResourceQuota status write) with kube-apiserver's: v1 defaulting, then
// the strategies of pkg/registry/core/{resourcequota,limitrange,event} and
// pkg/registry/apps/controllerrevision (and the ResourceQuota status
// strategy) through k8s.io/apiserver's rest.ValidateCreate and
// rest.ValidateUpdate, which add the common metadata checks and 1.37's
// declarative validation (none enforced for these kinds), on the internal
// objects kube-apiserver decodes, with every feature gate at its default.
// Events are written both through core v1 and through events.k8s.io/v1,
// whose request version upstream's event validation reads.
//
// Compared: the defaulted object, the object as prepared for storage, every
// error (type, field, detail, message; in order, but for metadata errors on
// update, compared as sets as upstream checks metadata several times, and
// for the errors upstream reports in map order: resource lists) and the
// warnings of valid writes of the main resource.
package corevalidation

import (
	"fmt"
	"os"
	"regexp"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/events/install"
	"k8s.io/kubernetes/pkg/registry/apps/controllerrevision"
	"k8s.io/kubernetes/pkg/registry/core/event"
	"k8s.io/kubernetes/pkg/registry/core/limitrange"
	"k8s.io/kubernetes/pkg/registry/core/resourcequota"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/test/upstream/internal/quietklog"
	"github.com/admitd/admitd/test/upstream/internal/strategydiff"
)

func TestMain(m *testing.M) {
	quietklog.SilenceErrors()
	os.Exit(m.Run())
}

// upstreamStrategy is the strategy of obj's kind (its status strategy for a
// status write), with its resource and a new v1 object of its type.
func upstreamStrategy(obj runtime.Object, status bool) (s strategydiff.Strategy, resource string, blank runtime.Object) {
	switch obj.(type) {
	case *corev1.ResourceQuota:
		if status {
			return resourcequota.StatusStrategy, "resourcequotas", &corev1.ResourceQuota{}
		}
		return resourcequota.Strategy, "resourcequotas", &corev1.ResourceQuota{}
	case *corev1.LimitRange:
		return limitrange.Strategy, "limitranges", &corev1.LimitRange{}
	case *corev1.Event:
		return event.Strategy, "events", &corev1.Event{}
	case *eventsv1.Event:
		return event.Strategy, "events", &eventsv1.Event{}
	case *appsv1.ControllerRevision:
		return controllerrevision.Strategy, "controllerrevisions", &appsv1.ControllerRevision{}
	}
	panic(fmt.Sprintf("not a kind of this test: %T", obj))
}

// keyed are the fields named by a resource-list key (spec.hard[cpu],
// spec.limits[0].max[memory]): upstream reports their errors in map order.
var keyed = regexp.MustCompile(`^(spec\.hard|status\.hard|status\.used|spec\.limits\[\d+\]\.[a-zA-Z]+)\[`)

func mapOrdered(field string) bool { return keyed.MatchString(field) }

// differs are one Differ per API group: the group is the request's, which
// upstream's event validation reads.
var differs = map[string]strategydiff.Differ{
	"":              {Group: "", Strategy: upstreamStrategy, MapOrdered: mapOrdered, Normalize: sameGeneratedName},
	"apps":          {Group: "apps", Strategy: upstreamStrategy, MapOrdered: mapOrdered},
	"events.k8s.io": {Group: "events.k8s.io", Strategy: upstreamStrategy, MapOrdered: mapOrdered},
}

// sameGeneratedName gives admitd's LimitRange the name upstream's strategy
// made up for a nameless one (both random UUIDs).
func sameGeneratedName(up, ours runtime.Object) {
	u, ok := up.(*corev1.LimitRange)
	o, ok2 := ours.(*corev1.LimitRange)
	if ok && ok2 && uuidName.MatchString(u.Name) && uuidName.MatchString(o.Name) {
		o.Name = u.Name
	}
}

var uuidName = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

type (
	write = strategydiff.Write
	tally = strategydiff.Tally
)

func compare(t *testing.T, cat *registry.Catalogue, w write, c *tally) {
	t.Helper()
	group := ""
	switch w.Obj.(type) {
	case *appsv1.ControllerRevision:
		group = "apps"
	case *eventsv1.Event:
		group = "events.k8s.io"
	}
	differs[group].Compare(t, cat, w, c)
}
