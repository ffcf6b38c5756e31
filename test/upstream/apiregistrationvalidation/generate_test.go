package apiregistrationvalidation

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// writes are the generated creates, updates and status writes compared.
const writes = 4000

func TestGenerated(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	g := &generator{rng: rand.New(rand.NewSource(1))}
	for i := range writes {
		// Always decoded with defaults: the internal type has no unset
		// service port, so an undefaulted one would differ in conversion
		// only.
		w := write{Name: fmt.Sprintf("#%d create", i), Defaulted: true}
		switch g.rng.Intn(3) {
		case 0:
			w.Obj = g.object()
		case 1:
			w.Old = g.stored()
			w.Name, w.Obj, w.Defaulted = fmt.Sprintf("#%d update", i), g.changed(w.Old.(*apiregistrationv1.APIService)), true
		default:
			w.Old, w.Status = g.stored(), true
			w.Name, w.Obj, w.Defaulted = fmt.Sprintf("#%d status write", i), g.changed(w.Old.(*apiregistrationv1.APIService)), true
		}
		compare(t, cat, w, &c)
	}
	t.Log(c.String())
	if c.Refused < writes/4 || c.Accepted < writes/8 {
		t.Errorf("generated writes are too one-sided: %s", c.String())
	}
}

// TestTable: the cases recorded from kube-apiserver 1.37.2 in
// internal/registry's tests, and the edges of each rule.
func TestTable(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	svc := &apiregistrationv1.ServiceReference{Namespace: "wardle", Name: "api"}
	for _, tc := range []struct {
		name string
		spec apiregistrationv1.APIServiceSpec
		obj  string
	}{
		{"remote", apiregistrationv1.APIServiceSpec{Group: "wardle.example.com", Version: "v1alpha1", GroupPriorityMinimum: 1000, VersionPriority: 15, Service: svc}, "v1alpha1.wardle.example.com"},
		{"core", apiregistrationv1.APIServiceSpec{Version: "v1", GroupPriorityMinimum: 18000, VersionPriority: 1}, "v1."},
		{"core v2", apiregistrationv1.APIServiceSpec{Version: "v2", GroupPriorityMinimum: 18000, VersionPriority: 1}, "v2."},
		{"local TLS", apiregistrationv1.APIServiceSpec{Group: "wardle.example.com", Version: "v1", VersionPriority: 1001, CABundle: []byte("abc"), InsecureSkipTLSVerify: true}, "v1.wrong"},
		{"bad service", apiregistrationv1.APIServiceSpec{Version: "V1", GroupPriorityMinimum: 100, VersionPriority: 10,
			Service: &apiregistrationv1.ServiceReference{Port: ptr.To[int32](70000)}, CABundle: []byte("abc"), InsecureSkipTLSVerify: true}, "V1.x"},
		{"priority bounds", apiregistrationv1.APIServiceSpec{Group: "a", Version: "v1", GroupPriorityMinimum: 20000, VersionPriority: 1000, Service: svc}, "v1.a"},
		{"beyond bounds", apiregistrationv1.APIServiceSpec{Group: "a", Version: "v1", GroupPriorityMinimum: 20001, VersionPriority: -1, Service: svc}, "v1.a"},
		{"port 0", apiregistrationv1.APIServiceSpec{Group: "a", Version: "v1", GroupPriorityMinimum: 1, VersionPriority: 1,
			Service: &apiregistrationv1.ServiceReference{Namespace: "n", Name: "s", Port: ptr.To[int32](0)}}, "v1.a"},
		{"path segment", apiregistrationv1.APIServiceSpec{Group: "a%b", Version: "v1", GroupPriorityMinimum: 1, VersionPriority: 1}, "v1.a%b"},
		{"dot dot", apiregistrationv1.APIServiceSpec{Group: ".", Version: "", GroupPriorityMinimum: 1, VersionPriority: 1}, ".."},
	} {
		s := &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: tc.obj}, Spec: tc.spec}
		compare(t, cat, write{Name: tc.name, Obj: s, Defaulted: true}, &c)
	}
	t.Log(c.String())
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

func (g *generator) priority(valid int32, others ...int32) int32 {
	if g.rng.Intn(4) != 0 {
		return valid
	}
	return others[g.rng.Intn(len(others))]
}

// object is a new APIService, valid more often than not.
func (g *generator) object() *apiregistrationv1.APIService {
	s := &apiregistrationv1.APIService{Spec: apiregistrationv1.APIServiceSpec{
		Group:   g.mostly("wardle.example.com", "", "Bad_Group", "a..b", strings.Repeat("g", 254), "apps"),
		Version: g.mostly("v1alpha1", "v1", "", "V1", "1v", "v1-", strings.Repeat("v", 64)),
		// Priorities at and beyond upstream's bounds.
		GroupPriorityMinimum: g.priority(1000, 0, -1, 1, 20000, 20001),
		VersionPriority:      g.priority(15, 0, -5, 1, 1000, 1001),
	}}
	if !g.chance(3) {
		ref := &apiregistrationv1.ServiceReference{Namespace: g.mostly("wardle", ""), Name: g.mostly("api", "")}
		if !g.chance(3) {
			ref.Port = ptr.To(int32(g.priority(443, 0, -1, 65535, 65536, 8443)))
		}
		s.Spec.Service = ref
	}
	if g.chance(3) {
		s.Spec.CABundle = []byte(g.pick("abc", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"))
	}
	s.Spec.InsecureSkipTLSVerify = g.chance(3)
	name := s.Spec.Version + "." + s.Spec.Group
	s.ObjectMeta = metav1.ObjectMeta{Name: g.mostly(name, "", "v1.other", "Bad_Name", "a/b", name+"x")}
	if g.chance(12) {
		s.GenerateName = g.pick("gen-", name, "a/")
	}
	if g.chance(8) {
		s.Labels = map[string]string{g.mostly("app", "bad key!"): g.mostly("web", "bad value!")}
	}
	if g.chance(15) {
		s.Finalizers = []string{g.pick("cleanup", "example.com/x", "kubernetes")}
	}
	if g.chance(20) {
		s.Namespace = "default"
	}
	if g.chance(3) {
		s.Status = g.status()
	}
	return s
}

func (g *generator) status() apiregistrationv1.APIServiceStatus {
	var st apiregistrationv1.APIServiceStatus
	for range g.rng.Intn(3) {
		st.Conditions = append(st.Conditions, apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.APIServiceConditionType(g.mostly("Available", "Other", "")),
			Status: apiregistrationv1.ConditionStatus(g.mostly("True", "False", "Unknown", "Maybe", "")), Reason: g.pick("", "Passed", "Bad Reason"),
			Message: g.pick("", "all checks passed")})
	}
	return st
}

// stored is an APIService as stored: a valid one, defaulted and prepared
// as upstream created it, with a resourceVersion.
func (g *generator) stored() *apiregistrationv1.APIService {
	s := g.object()
	s.Spec.Group, s.Spec.Version = "wardle.example.com", "v1alpha1"
	s.Spec.GroupPriorityMinimum, s.Spec.VersionPriority = 1000, 15
	if s.Spec.Service != nil {
		s.Spec.Service.Namespace, s.Spec.Service.Name = "wardle", "api"
		s.Spec.Service.Port = nil
		if len(s.Spec.CABundle) > 0 {
			s.Spec.InsecureSkipTLSVerify = false
		}
	} else {
		s.Spec.CABundle, s.Spec.InsecureSkipTLSVerify = nil, false
	}
	s.ObjectMeta = metav1.ObjectMeta{Name: "v1alpha1.wardle.example.com", ResourceVersion: "7", UID: "0b6d5f0e-uid",
		CreationTimestamp: metav1.Unix(1700000000, 0)}
	s.Status = g.status()
	for i := range s.Status.Conditions {
		s.Status.Conditions[i].Status = "True"
	}
	legacyscheme.Scheme.Default(s)
	return s
}

// changed is a write over old: some fields kept, some changed (status
// included).
func (g *generator) changed(old *apiregistrationv1.APIService) *apiregistrationv1.APIService {
	s := old.DeepCopy()
	fresh := g.object()
	switch g.rng.Intn(5) {
	case 0:
		s.Spec = fresh.Spec
	case 1:
		s.Spec.Service = fresh.Spec.Service
	case 2:
		s.Spec.GroupPriorityMinimum, s.Spec.VersionPriority = fresh.Spec.GroupPriorityMinimum, fresh.Spec.VersionPriority
	case 3:
		s.Spec.CABundle, s.Spec.InsecureSkipTLSVerify = fresh.Spec.CABundle, fresh.Spec.InsecureSkipTLSVerify
	}
	if g.chance(4) {
		s.Labels = map[string]string{"tier": g.mostly("gold", "bad value!")}
	}
	if g.chance(6) {
		s.Annotations = map[string]string{"note": "x"}
	}
	if g.chance(15) {
		s.ResourceVersion = ""
	}
	if g.chance(20) {
		s.Name = "renamed"
	}
	if g.chance(2) {
		s.Status = g.status()
	}
	return s
}
