package nodevalidation

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/test/upstream/internal/tolgen"
)

// writesPerKind are the generated creates and updates of RuntimeClasses
// and of Leases.
const writesPerKind = 3000

func TestGeneratedRuntimeClassesAndLeases(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	for ki, kind := range []string{"RuntimeClass", "Lease"} {
		g := &generator{rng: rand.New(rand.NewSource(int64(ki + 2)))}
		for i := range writesPerKind {
			g.write()
			w := write{Name: fmt.Sprintf("%s #%d create", kind, i), Defaulted: !g.chance(8)}
			if g.chance(2) {
				w.Obj = g.object(kind)
			} else {
				w.Old = g.stored(kind)
				w.Name, w.Obj, w.Defaulted = fmt.Sprintf("%s #%d update", kind, i), g.changed(w.Old), true
			}
			compare(t, cat, w, &c)
		}
	}
	t.Log(c.String())
	if c.Refused < writesPerKind/2 || c.Accepted < writesPerKind/4 {
		t.Errorf("generated writes are too one-sided: %s", c.String())
	}
}

var (
	handlers   = []string{"runc", "kata", "gvisor-1", "", "Bad_Handler", "a.b", strings.Repeat("h", 64), "-x"}
	overheads  = []corev1.ResourceName{"cpu", "memory", "ephemeral-storage", "hugepages-2Mi", "example.com/gpu", "pods", "bad name!", "requests.cpu"}
	strategies = []coordinationv1.CoordinatedLeaseStrategy{"OldestEmulationVersion", "", "Other", "example.com/mine", "a/b/c", "Bad_/x"}
)

func (g *generator) object(kind string) runtime.Object {
	if kind == "Lease" {
		return g.lease()
	}
	return g.runtimeClass()
}

func (g *generator) runtimeClass() *nodev1.RuntimeClass {
	rc := &nodev1.RuntimeClass{ObjectMeta: g.meta("kata", "", "Bad_Name", strings.Repeat("n", 254)), Handler: g.mostly(g.pick(handlers[:3]...), handlers...)}
	if g.chance(3) {
		rc.Overhead = &nodev1.Overhead{PodFixed: corev1.ResourceList{}}
		for range g.rng.Intn(3) {
			name := overheads[g.rng.Intn(2)]
			q := g.pick("100m", "64Mi", "1")
			if g.bad() {
				name, q = overheads[g.rng.Intn(len(overheads))], g.pick("-1", "1.5", "3Mi", "2Mi", "0")
			}
			rc.Overhead.PodFixed[name] = resource.MustParse(q)
		}
	}
	if g.chance(2) {
		rc.Scheduling = &nodev1.Scheduling{}
		if g.chance(2) {
			rc.Scheduling.NodeSelector = map[string]string{g.mostly("runtime", "bad key!", "beta.kubernetes.io/arch", "failure-domain.beta.kubernetes.io/zone"): g.mostly("kata", "bad value!")}
		}
		if !g.bad() {
			rc.Scheduling.Tolerations = tolgen.Tolerations(g.rng, 4)
			for i := range rc.Scheduling.Tolerations {
				tol := &rc.Scheduling.Tolerations[i]
				if tol.Operator == corev1.TolerationOpLt && !g.bad() {
					tol.Operator = corev1.TolerationOpEqual
				}
			}
		} else {
			rc.Scheduling.Tolerations = []corev1.Toleration{{Key: g.pick("bad key!", "", "k"), Operator: corev1.TolerationOperator(g.pick("Equal", "Exists", "Odd", "")),
				Value: g.pick("", "v", "bad value!"), Effect: corev1.TaintEffect(g.pick("", "NoSchedule", "Bogus"))}}
		}
	}
	return rc
}

func (g *generator) lease() *coordinationv1.Lease {
	l := &coordinationv1.Lease{ObjectMeta: g.meta("n1", "", "Bad_Name", "a/b")}
	if l.Namespace == "" {
		l.Namespace = "kube-node-lease"
	}
	if g.chance(8) {
		l.Namespace = ""
	}
	if !g.chance(5) {
		l.Spec.HolderIdentity = ptr.To(g.pick("n1", "", "anyone at all!"))
	}
	if !g.chance(4) {
		l.Spec.LeaseDurationSeconds = ptr.To(int32(40))
		if g.bad() {
			l.Spec.LeaseDurationSeconds = ptr.To(int32(g.pick2(0, -1)))
		}
	}
	if g.chance(2) {
		l.Spec.LeaseTransitions = ptr.To(int32(g.pick2(0, 3)))
		if g.bad() {
			l.Spec.LeaseTransitions = ptr.To(int32(-1))
		}
	}
	if g.chance(3) {
		now := metav1.NewMicroTime(metav1.Date(2024, 1, 2, 3, 4, 5, 6000, metav1.Now().UTC().Location()).Time)
		l.Spec.AcquireTime, l.Spec.RenewTime = &now, &now
	}
	if g.chance(4) {
		l.Spec.Strategy = ptr.To(strategies[g.rng.Intn(len(strategies))])
	}
	if g.chance(4) {
		l.Spec.PreferredHolder = ptr.To(g.pick("", "n2"))
	}
	return l
}

// stored is an object as stored: defaulted, with a valid name and a
// resourceVersion, and otherwise whatever was allowed when it was written
// (a Lease's strategy and preferred holder under CoordinatedLeaderElection
// included).
func (g *generator) stored(kind string) runtime.Object {
	obj := g.object(kind)
	m := metaOf(obj)
	m.Name = map[string]string{"RuntimeClass": "kata", "Lease": "n1"}[kind]
	m.GenerateName, m.ResourceVersion, m.Generation, m.Finalizers, m.Labels = "", "7", 0, nil, nil
	if kind == "Lease" {
		m.Namespace = "kube-node-lease"
	} else {
		m.Namespace = ""
	}
	legacyscheme.Scheme.Default(obj)
	return obj
}

// changed is a write over old: some fields kept, some changed.
func (g *generator) changed(old runtime.Object) runtime.Object {
	obj := old.DeepCopyObject()
	m := metaOf(obj)
	if g.chance(4) {
		m.Labels = map[string]string{"tier": g.mostly("gold", "bad value!")}
	}
	if g.chance(15) {
		m.ResourceVersion = ""
	}
	if g.chance(20) {
		m.Name = "renamed"
	}
	switch o := obj.(type) {
	case *nodev1.RuntimeClass:
		f := g.runtimeClass()
		switch g.rng.Intn(4) {
		case 0:
			o.Handler = f.Handler
		case 1:
			o.Overhead, o.Scheduling = f.Overhead, f.Scheduling
		case 2:
			o.Handler, o.Overhead, o.Scheduling = f.Handler, f.Overhead, f.Scheduling
		}
	case *coordinationv1.Lease:
		f := g.lease()
		switch g.rng.Intn(4) {
		case 0:
			o.Spec = f.Spec
		case 1:
			o.Spec.HolderIdentity, o.Spec.RenewTime, o.Spec.LeaseTransitions = f.Spec.HolderIdentity, f.Spec.RenewTime, f.Spec.LeaseTransitions
		case 2:
			o.Spec.Strategy, o.Spec.PreferredHolder = f.Spec.Strategy, f.Spec.PreferredHolder
		}
	}
	return obj
}

func metaOf(obj runtime.Object) *metav1.ObjectMeta {
	switch o := obj.(type) {
	case *nodev1.RuntimeClass:
		return &o.ObjectMeta
	case *coordinationv1.Lease:
		return &o.ObjectMeta
	}
	panic(fmt.Sprintf("not a runtime class or lease: %T", obj))
}
