package networkingvalidation

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/admitd/admitd/internal/registry"
)

// writesPerKind are the generated creates, updates and (for ServiceCIDRs)
// status writes compared per kind.
const writesPerKind = 2000

var kinds = []string{"ServiceCIDR", "IPAddress"}

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
			default: // a status write of a ServiceCIDR, another update of an IPAddress
				w.Old = g.stored(kind)
				w.Status = kind == "ServiceCIDR"
				w.Name, w.Obj, w.Defaulted = fmt.Sprintf("%s #%d update (status %v)", kind, i, w.Status), g.changed(w.Old), true
			}
			compare(t, cat, w, &c)
		}
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

var (
	cidrs     = []string{"10.0.0.0/24", "10.96.0.0/28", "fd00::/112", "fd00:1234::/64", "10.0.0.1/24", "FD00::/64", "fd00:0::/64", "nope", "10.1.0.0/33", "::ffff:10.1.0.0/120", "192.168.007.0/24", "10.0.0.5", ""}
	addresses = []string{"10.0.0.10", "fd00::10", "2001:4860:4860::8888", "127.1.0.050", "fd00:0::1", "::ffff:1.2.3.4", "notanip", "FD00::1", "10.0.0.256", ""}
	segments  = []string{"", "a/b", "..", ".", "x%y", "Upper", strings.Repeat("s", 300)}
)

func (g *generator) meta(name string, names []string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: g.mostly(name, names...)}
	if g.chance(12) {
		m.GenerateName = g.pick("gen-", "Bad_", "a/", "10.0.0.9")
	}
	if g.chance(8) {
		m.Labels = map[string]string{g.mostly("app", "bad key!"): g.mostly("web", "bad value!")}
	}
	if g.chance(15) {
		m.Finalizers = []string{g.pick("cleanup", "example.com/x", "kubernetes", "networking.k8s.io/service-cidr-finalizer")}
	}
	if g.chance(10) {
		m.Generation = int64(g.rng.Intn(4) - 1)
	}
	if g.chance(20) {
		m.Namespace = "default"
	}
	return m
}

func (g *generator) object(kind string) runtime.Object {
	if kind == "ServiceCIDR" {
		sc := &networkingv1.ServiceCIDR{ObjectMeta: g.meta("extra", []string{"", "Bad_Name", "a/b", strings.Repeat("n", 254)})}
		for range g.rng.Intn(4) {
			sc.Spec.CIDRs = append(sc.Spec.CIDRs, g.mostly(g.pick("10.0.0.0/24", "fd00::/112"), cidrs...))
		}
		if g.chance(4) {
			sc.Status = g.cidrStatus()
		}
		return sc
	}
	ip := &networkingv1.IPAddress{ObjectMeta: g.meta("10.0.0.10", addresses)}
	if !g.chance(6) {
		ip.Spec.ParentRef = &networkingv1.ParentReference{Group: g.mostly("", "gateway.networking.k8s.io", "Bad_Group", ".x"),
			Resource: g.mostly("services", segments...), Namespace: g.mostly("default", segments...), Name: g.mostly("web", segments...)}
	}
	return ip
}

func (g *generator) cidrStatus() networkingv1.ServiceCIDRStatus {
	st := networkingv1.ServiceCIDRStatus{}
	for range g.rng.Intn(3) {
		st.Conditions = append(st.Conditions, metav1.Condition{Type: g.mostly("Ready", "", "bad type!"),
			Status: metav1.ConditionStatus(g.mostly("True", "False", "Unknown", "maybe")), Reason: g.mostly("", "Terminating", "bad reason!"),
			Message: g.mostly("ready", strings.Repeat("m", 40000)), LastTransitionTime: metav1.Date(2020, 1, 1, 0, 0, 0, 0, metav1.Now().Location())})
	}
	return st
}

// stored is an object as stored: defaulted, with a valid name and a
// resourceVersion, and otherwise whatever was allowed when it was written.
func (g *generator) stored(kind string) runtime.Object {
	obj := g.object(kind)
	m := metaOf(obj)
	m.Name = map[string]string{"ServiceCIDR": "extra", "IPAddress": "10.0.0.10"}[kind]
	m.GenerateName, m.ResourceVersion, m.Generation, m.Finalizers, m.Namespace = "", "7", 0, nil, ""
	m.Annotations, m.Labels = nil, nil
	legacyscheme.Scheme.Default(obj)
	return obj
}

// changed is a write over old: some fields kept, some changed (status
// included).
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
	case *networkingv1.ServiceCIDR:
		f := g.object("ServiceCIDR").(*networkingv1.ServiceCIDR)
		switch g.rng.Intn(4) {
		case 0:
			o.Spec = f.Spec
		case 1:
			o.Spec.CIDRs = append(o.Spec.CIDRs, g.pick(cidrs...))
		}
		if g.chance(2) {
			o.Status = g.cidrStatus()
		}
	case *networkingv1.IPAddress:
		f := g.object("IPAddress").(*networkingv1.IPAddress)
		switch g.rng.Intn(4) {
		case 0:
			o.Spec = f.Spec
		case 1:
			if o.Spec.ParentRef != nil && f.Spec.ParentRef != nil {
				o.Spec.ParentRef.Name = f.Spec.ParentRef.Name
			}
		}
	}
	return obj
}

func metaOf(obj runtime.Object) *metav1.ObjectMeta {
	switch o := obj.(type) {
	case *networkingv1.ServiceCIDR:
		return &o.ObjectMeta
	case *networkingv1.IPAddress:
		return &o.ObjectMeta
	}
	panic(fmt.Sprintf("not a networking object: %T", obj))
}
