package csivalidation

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// writesPerKind are the generated creates, updates and (for CSINodes)
// status writes compared per kind.
const writesPerKind = 3000

var kinds = []string{"CSIDriver", "CSINode", "CSIStorageCapacity"}

func TestGenerated(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	for ki, kind := range kinds {
		g := &generator{rng: rand.New(rand.NewSource(int64(ki + 1)))}
		for i := range writesPerKind {
			w := write{Name: fmt.Sprintf("%s #%d create", kind, i), Defaulted: !g.chance(8)}
			switch g.rng.Intn(3) {
			case 0:
				w.Obj = g.object(kind)
			case 1:
				w.Old = g.stored(kind)
				w.Name, w.Obj, w.Defaulted = fmt.Sprintf("%s #%d update", kind, i), g.changed(w.Old), true
			default: // a status write of a CSINode, another update of the others
				w.Old = g.stored(kind)
				w.Status = kind == "CSINode"
				w.Name, w.Obj, w.Defaulted = fmt.Sprintf("%s #%d update (status %v)", kind, i, w.Status), g.changed(w.Old), true
			}
			compare(t, cat, w, &c)
		}
	}
	t.Log(c.String())
	if c.Refused < len(kinds)*writesPerKind/4 || c.Accepted < len(kinds)*writesPerKind/4 || c.Warned == 0 {
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

// boolPtr is nil, true or false.
func (g *generator) boolPtr() *bool {
	switch g.rng.Intn(3) {
	case 0:
		return nil
	case 1:
		return ptr.To(true)
	}
	return ptr.To(false)
}

// int64Ptr is nil (one time in three) or one of options.
func (g *generator) int64Ptr(options ...int64) *int64 {
	if g.chance(3) {
		return nil
	}
	return ptr.To(options[g.rng.Intn(len(options))])
}

// rarely returns valid but one time in eight.
func (g *generator) rarely(valid string, others ...string) string {
	if g.rng.Intn(8) != 0 {
		return valid
	}
	return g.pick(others...)
}

// strings is nil, empty, or one to three of options.
func (g *generator) strings(options ...string) []string {
	switch g.rng.Intn(8) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	out := make([]string, 1+g.rng.Intn(3))
	for i := range out {
		out[i] = g.pick(options...)
	}
	return out
}

var driverNames = []string{"io.kubernetes.storage.csi.driver", "Upper.Case.Driver", "", "a/b", "_bad", strings.Repeat("a", 64), "x"}

func (g *generator) meta(name string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: g.mostly(name, "", "Bad_Name", "a/b", "x.y", strings.Repeat("n", 254))}
	if g.chance(12) {
		m.GenerateName = g.pick("gen-", "Bad_", "a/")
	}
	if g.chance(8) {
		m.Labels = map[string]string{g.mostly("app", "bad key!"): g.mostly("web", "bad value!")}
	}
	if g.chance(15) {
		m.Finalizers = []string{g.pick("cleanup", "example.com/x", "kubernetes")}
	}
	if g.chance(6) {
		m.Generation = int64(g.rng.Intn(4) - 1)
	}
	return m
}

func (g *generator) object(kind string) runtime.Object {
	switch kind {
	case "CSIDriver":
		return &storagev1.CSIDriver{ObjectMeta: g.meta("csi.example.com"), Spec: g.driverSpec()}
	case "CSINode":
		return &storagev1.CSINode{ObjectMeta: g.meta("node-1"), Spec: g.nodeSpec(), Status: g.nodeStatus()}
	}
	c := &storagev1.CSIStorageCapacity{ObjectMeta: g.meta("cap-1"), StorageClassName: g.mostly("fast", "", "Bad_Class", "a/b"),
		Capacity: g.quantity(), MaximumVolumeSize: g.quantity(), NodeTopology: g.selector()}
	c.Namespace = g.mostly("default", "", "Bad_NS")
	return c
}

func (g *generator) driverSpec() storagev1.CSIDriverSpec {
	s := storagev1.CSIDriverSpec{AttachRequired: g.boolPtr(), PodInfoOnMount: g.boolPtr(), StorageCapacity: g.boolPtr(),
		RequiresRepublish: g.boolPtr(), SELinuxMount: g.boolPtr(), ServiceAccountTokenInSecrets: g.boolPtr(),
		PreventPodSchedulingIfMissing: g.boolPtr(), NodeAllocatableUpdatePeriodSeconds: g.int64Ptr(10, 60, 10, 60, 10, 60, 9, -1)}
	if g.chance(2) {
		s.FSGroupPolicy = ptr.To(storagev1.FSGroupPolicy(g.rarely(g.pick("File", "None", "ReadWriteOnceWithFSType"), "", "file", "Other")))
	}
	for _, m := range g.strings("Persistent", "Ephemeral") {
		s.VolumeLifecycleModes = append(s.VolumeLifecycleModes, storagev1.VolumeLifecycleMode(g.rarely(m, "persistent", "")))
	}
	if !g.chance(3) {
		for i, a := range g.strings("vault", "gcp", "") {
			if g.rng.Intn(6) != 0 { // distinct audiences, mostly
				a = fmt.Sprint(a, i)
			}
			s.TokenRequests = append(s.TokenRequests, storagev1.TokenRequest{Audience: a,
				ExpirationSeconds: g.int64Ptr(600, 3600, 1<<32, 600, 3600, 1<<32, 599, 1<<32+1, 0, -5)})
		}
	}
	if len(s.TokenRequests) == 0 && !g.chance(4) {
		s.ServiceAccountTokenInSecrets = nil
	}
	return s
}

func (g *generator) nodeSpec() storagev1.CSINodeSpec {
	var s storagev1.CSINodeSpec
	for range g.rng.Intn(4) {
		d := storagev1.CSINodeDriver{Name: g.mostly(g.pick("a.csi.io", "b.csi.io"), driverNames...),
			NodeID:       g.mostly("node-1", "", strings.Repeat("i", 256), strings.Repeat("i", 257)),
			TopologyKeys: g.strings("topology.kubernetes.io/zone", "zone", "rack", "zone", g.rarely("zone", "", "Bad Key", "Company.Com/zone", "a/b/c"))}
		if g.chance(2) {
			d.Allocatable = &storagev1.VolumeNodeResources{}
			if !g.chance(4) {
				d.Allocatable.Count = ptr.To(int32(g.rng.Intn(40) - 5))
			}
		}
		s.Drivers = append(s.Drivers, d)
	}
	return s
}

func (g *generator) nodeStatus() storagev1.CSINodeStatus {
	var st storagev1.CSINodeStatus
	for range g.rng.Intn(3) {
		h := storagev1.StorageHealth{Name: g.mostly(g.pick("a.csi.io", "b.csi.io"), driverNames...)}
		n := g.rng.Intn(3)
		if g.chance(10) {
			n = 17
		}
		for range n {
			c := storagev1.StorageHealthCondition{Status: storagev1.StorageHealthStatusType(g.mostly(g.pick("StorageUnreachable", "StorageDegraded"),
				"", "Unreachable", "Healthy")), Reason: g.mostly("BackendDown", "", "bad;reason", strings.Repeat("r", 257), "9lives"),
				Message: g.mostly("ok", strings.Repeat("m", 1025))}
			if g.chance(3) {
				c.AccessMode = ptr.To(corev1.PersistentVolumeAccessMode(g.mostly("ReadWriteOnce", "RWO", "")))
			}
			if g.chance(3) {
				c.VolumeMode = ptr.To(corev1.PersistentVolumeMode(g.mostly("Block", "Filesystem", "block")))
			}
			h.HealthConditions = append(h.HealthConditions, c)
		}
		st.StorageHealth = append(st.StorageHealth, h)
	}
	return st
}

func (g *generator) quantity() *resource.Quantity {
	if g.chance(3) {
		return nil
	}
	q := resource.MustParse(g.rarely(g.pick("1Gi", "0", "100G", "1.5"), "-1", "-5Mi"))
	return &q
}

// selector is nil, empty, or selects on labels (some of them deprecated
// node labels) with expressions of every operator, valid or not.
func (g *generator) selector() *metav1.LabelSelector {
	if g.chance(4) {
		return nil
	}
	s := &metav1.LabelSelector{}
	key := func() string {
		return g.rarely(g.pick("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone", "beta.kubernetes.io/os"), "bad key!", "")
	}
	if g.chance(2) {
		s.MatchLabels = map[string]string{key(): g.rarely("a", "bad value!", "")}
		if g.chance(2) {
			s.MatchLabels[key()] = g.rarely("b", "bad value!")
		}
	}
	for range g.rng.Intn(3) {
		op := g.rarely(g.pick("In", "NotIn", "Exists", "DoesNotExist"), "Equals", "")
		var values []string
		if op == "In" || op == "NotIn" || g.chance(8) {
			values = g.strings(g.rarely("a", "bad value!", ""), "b")
		}
		s.MatchExpressions = append(s.MatchExpressions, metav1.LabelSelectorRequirement{Key: key(),
			Operator: metav1.LabelSelectorOperator(op), Values: values})
	}
	return s
}

// stored is an object as stored: defaulted, with a valid name, a
// resourceVersion and a generation, and otherwise whatever was allowed
// when it was written (possibly no longer valid).
func (g *generator) stored(kind string) runtime.Object {
	obj := g.object(kind)
	m := metaOf(obj)
	m.Name = map[string]string{"CSIDriver": "csi.example.com", "CSINode": "node-1", "CSIStorageCapacity": "cap-1"}[kind]
	m.GenerateName, m.ResourceVersion, m.Generation, m.Finalizers = "", "7", int64(g.rng.Intn(3)), nil
	m.Annotations, m.Labels = nil, nil
	if kind == "CSIStorageCapacity" {
		m.Namespace = "default"
	}
	if n, ok := obj.(*storagev1.CSINode); ok && g.chance(2) {
		n.Status = storagev1.CSINodeStatus{}
	}
	legacyscheme.Scheme.Default(obj)
	return obj
}

// changed is a write over old: some fields kept, some changed (status
// included, for CSINode status writes).
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
	case *storagev1.CSIDriver:
		g.changeDriver(&o.Spec)
	case *storagev1.CSINode:
		g.changeNode(o)
	case *storagev1.CSIStorageCapacity:
		fresh := g.object("CSIStorageCapacity").(*storagev1.CSIStorageCapacity)
		switch g.rng.Intn(5) {
		case 0:
			o.Capacity, o.MaximumVolumeSize = fresh.Capacity, fresh.MaximumVolumeSize
		case 1:
			o.NodeTopology = fresh.NodeTopology
		case 2:
			o.StorageClassName = fresh.StorageClassName
		}
	}
	return obj
}

func (g *generator) changeDriver(s *storagev1.CSIDriverSpec) {
	fresh := g.driverSpec()
	switch g.rng.Intn(7) {
	case 0:
		*s = fresh
	case 1:
		s.AttachRequired = fresh.AttachRequired
	case 2:
		s.VolumeLifecycleModes = fresh.VolumeLifecycleModes
	case 3:
		s.TokenRequests, s.ServiceAccountTokenInSecrets = fresh.TokenRequests, fresh.ServiceAccountTokenInSecrets
	case 4:
		s.PodInfoOnMount, s.SELinuxMount, s.NodeAllocatableUpdatePeriodSeconds = fresh.PodInfoOnMount, fresh.SELinuxMount,
			fresh.NodeAllocatableUpdatePeriodSeconds
	}
}

func (g *generator) changeNode(n *storagev1.CSINode) {
	switch g.rng.Intn(5) {
	case 0:
		n.Spec = g.nodeSpec()
	case 1:
		for i := range n.Spec.Drivers {
			if g.chance(2) {
				n.Spec.Drivers[i].Allocatable = &storagev1.VolumeNodeResources{Count: ptr.To(int32(g.rng.Intn(20) - 2))}
			}
			if g.chance(4) {
				n.Spec.Drivers[i].NodeID = "node-2"
			}
		}
	case 2:
		n.Spec.Drivers = append(n.Spec.Drivers, g.nodeSpec().Drivers...)
	}
	if g.chance(2) {
		n.Status = g.nodeStatus()
	}
}

func metaOf(obj runtime.Object) *metav1.ObjectMeta {
	switch o := obj.(type) {
	case *storagev1.CSIDriver:
		return &o.ObjectMeta
	case *storagev1.CSINode:
		return &o.ObjectMeta
	case *storagev1.CSIStorageCapacity:
		return &o.ObjectMeta
	}
	panic(fmt.Sprintf("not a CSI object: %T", obj))
}
