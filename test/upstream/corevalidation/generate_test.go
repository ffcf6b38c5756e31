package corevalidation

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/admitd/admitd/internal/registry"
)

// writesPerKind are the generated creates, updates and (for ResourceQuotas)
// status writes compared per kind.
const writesPerKind = 2500

// kinds are the generated kinds; "EventsV1" is an Event written through
// events.k8s.io/v1.
var kinds = []string{"ResourceQuota", "LimitRange", "ControllerRevision", "Event", "EventsV1"}

func TestGenerated(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	for ki, kind := range kinds {
		var own tally
		g := &generator{rng: rand.New(rand.NewSource(int64(ki + 1)))}
		for i := range writesPerKind {
			w := write{Name: fmt.Sprintf("%s #%d create", kind, i), Defaulted: !g.chance(8)}
			switch g.rng.Intn(3) {
			case 0:
				w.Obj = g.object(kind)
			case 1:
				w.Old = g.stored(kind)
				w.Name, w.Obj, w.Defaulted = fmt.Sprintf("%s #%d update", kind, i), g.changed(w.Old), true
			default: // a status write of a ResourceQuota, another update of the others
				w.Old = g.stored(kind)
				w.Status = kind == "ResourceQuota"
				w.Name, w.Obj, w.Defaulted = fmt.Sprintf("%s #%d update (status %v)", kind, i, w.Status), g.changed(w.Old), true
			}
			compare(t, cat, w, &own)
		}
		t.Logf("%s: %d writes, %d refused, %d accepted (%d with warnings), %d mismatches", kind,
			own.Creates+own.Updates+own.StatusWrites, own.Refused, own.Accepted, own.Warned, own.Mismatches)
		addTally(&c, own)
	}
	t.Log(c.String())
	if c.Refused < len(kinds)*writesPerKind/4 || c.Accepted < len(kinds)*writesPerKind/8 {
		t.Errorf("generated writes are too one-sided: %s", c.String())
	}
}

type generator struct{ rng *rand.Rand }

func (g *generator) pick(options ...string) string { return options[g.rng.Intn(len(options))] }

func (g *generator) chance(n int) bool { return g.rng.Intn(n) == 0 }

// mostly returns valid most of the time, else any of the others.
func (g *generator) mostly(valid string, others ...string) string {
	if g.rng.Intn(4) != 0 {
		return valid
	}
	return g.pick(others...)
}

var badNames = []string{"", "Bad_Name", "a/b", strings.Repeat("n", 254), "has.dots", "UPPER", "x%y", ".."}

func (g *generator) meta(name string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: g.mostly(name, badNames...), Namespace: g.mostly("default", "", "kube-system", "team-a", "Bad_NS")}
	if g.chance(12) {
		m.GenerateName = g.pick("gen-", "Bad_", "a/", "x%")
	}
	if g.chance(8) {
		m.Labels = map[string]string{g.mostly("app", "bad key!"): g.mostly("web", "bad value!")}
	}
	if g.chance(15) {
		m.Finalizers = []string{g.pick("cleanup", "example.com/x", "kubernetes", "bad name!/x", "orphan")}
	}
	if g.chance(10) {
		m.Generation = int64(g.rng.Intn(4) - 1)
	}
	return m
}

func (g *generator) object(kind string) runtime.Object {
	switch kind {
	case "ResourceQuota":
		return g.quota()
	case "LimitRange":
		return g.limitRange()
	case "ControllerRevision":
		return g.revision()
	case "Event":
		return g.event(2)
	case "EventsV1":
		return eventsV1Of(g.event(5))
	}
	panic(kind)
}

// stored is an object as stored: defaulted, with a valid name and a
// resourceVersion, and otherwise whatever was allowed when it was written.
func (g *generator) stored(kind string) runtime.Object {
	obj := g.object(kind)
	m := metaOf(obj)
	m.SetName("stored")
	m.SetNamespace("default")
	m.SetGenerateName("")
	m.SetResourceVersion("7")
	m.SetGeneration(0)
	m.SetFinalizers(nil)
	m.SetAnnotations(nil)
	m.SetLabels(nil)
	legacyscheme.Scheme.Default(obj)
	return obj
}

// changed is a write over old: some fields kept, some changed (status
// included).
func (g *generator) changed(old runtime.Object) runtime.Object {
	obj := old.DeepCopyObject()
	m := metaOf(obj)
	if g.chance(4) {
		m.SetLabels(map[string]string{"tier": g.mostly("gold", "bad value!")})
	}
	if g.chance(15) {
		m.SetResourceVersion("")
	}
	if g.chance(20) {
		m.SetName("renamed")
	}
	if g.chance(20) {
		m.SetFinalizers([]string{g.pick("cleanup", "example.com/x", "bad name!/x")})
	}
	g.change(obj)
	return obj
}

func metaOf(obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(err)
	}
	return m
}

// addTally counts what other saw into c.
func addTally(c *tally, other tally) {
	c.Creates += other.Creates
	c.Updates += other.Updates
	c.StatusWrites += other.StatusWrites
	c.Refused += other.Refused
	c.Accepted += other.Accepted
	c.Warned += other.Warned
	c.Mismatches += other.Mismatches
	for k, n := range other.FirstErrors {
		if c.FirstErrors == nil {
			c.FirstErrors = map[string]int{}
		}
		c.FirstErrors[k] += n
	}
}
