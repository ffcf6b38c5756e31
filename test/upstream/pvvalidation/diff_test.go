// Package pvvalidation compares admitd's PersistentVolume strategy
// (internal/registry: decoding defaults, then the preparation and
// validation of a create, an update or a status write, and the warnings)
// with kube-apiserver's: v1 defaulting (pkg/apis/core/v1), then
// pkg/registry/core/persistentvolume's strategy and status strategy
// through k8s.io/apiserver's rest.ValidateCreate and rest.ValidateUpdate,
// which add the common metadata checks and 1.37's declarative validation,
// on the internal objects kube-apiserver decodes, with every feature gate
// at its default.
//
// Compared: the defaulted object, the object as prepared for storage (the
// phase transition time both sides set from their clocks is made equal
// when both are recent), every error (type, field, detail, message; in
// order, but for metadata errors on update, compared as sets, and for
// capacity and flexVolume option errors, which come in map order) and the
// warnings.
package pvvalidation

import (
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolume"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/test/upstream/internal/quietklog"
	"github.com/admitd/admitd/test/upstream/internal/strategydiff"
)

func TestMain(m *testing.M) {
	quietklog.SilenceErrors()
	os.Exit(m.Run())
}

func upstreamStrategy(_ runtime.Object, status bool) (s strategydiff.Strategy, resource string, blank runtime.Object) {
	if status {
		return persistentvolume.StatusStrategy, "persistentvolumes", &corev1.PersistentVolume{}
	}
	return persistentvolume.Strategy, "persistentvolumes", &corev1.PersistentVolume{}
}

// mapOrdered are the fields whose errors both sides report in map order.
func mapOrdered(field string) bool {
	return strings.HasPrefix(field, "spec.capacity") || strings.Contains(field, ".flexVolume.options")
}

// sameRecentTransition makes the phase transition times both sides set
// from their clocks equal, when both are within a minute of now.
func sameRecentTransition(upstream, ours runtime.Object) {
	up, our := upstream.(*corev1.PersistentVolume), ours.(*corev1.PersistentVolume)
	a, b := up.Status.LastPhaseTransitionTime, our.Status.LastPhaseTransitionTime
	if a != nil && b != nil && time.Since(a.Time) < time.Minute && time.Since(b.Time) < time.Minute {
		our.Status.LastPhaseTransitionTime = a.DeepCopy()
	}
}

var differ = strategydiff.Differ{Group: "", Strategy: upstreamStrategy, MapOrdered: mapOrdered, Normalize: sameRecentTransition}

type (
	write = strategydiff.Write
	tally = strategydiff.Tally
)

func compare(t *testing.T, cat *registry.Catalogue, w write, c *tally) {
	t.Helper()
	differ.Compare(t, cat, w, c)
}

// longAgo is the phase transition time of stored volumes.
var longAgo = metav1.NewTime(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC))
