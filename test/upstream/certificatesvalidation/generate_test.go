package certificatesvalidation

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// writesPerKind are the generated creates, updates and (for requests)
// status writes compared per kind.
const writesPerKind = 2000

var kinds = []string{"ClusterTrustBundle", "PodCertificateRequest"}

func TestGenerated(t *testing.T) {
	f := fixtureOnce()
	cat := registry.NewCatalogue()
	var c tally
	for ki, kind := range kinds {
		g := &generator{rng: rand.New(rand.NewSource(int64(ki + 1))), f: f}
		for i := range writesPerKind {
			w := write{name: fmt.Sprintf("%s #%d create", kind, i), defaulted: !g.chance(8)}
			switch g.rng.Intn(3) {
			case 0:
				w.obj = g.object(kind)
			case 1:
				w.old = g.stored(kind)
				w.name, w.obj, w.defaulted = fmt.Sprintf("%s #%d update", kind, i), g.changed(w.old), true
			default: // a status write of a request, another update of a bundle
				w.old = g.stored(kind)
				w.status = kind == "PodCertificateRequest"
				w.name, w.obj, w.defaulted = fmt.Sprintf("%s #%d update (status %v)", kind, i, w.status), g.changed(w.old), true
				if w.status {
					g.changeStatus(w.obj.(*certificatesv1.PodCertificateRequest))
				}
			}
			compare(t, cat, w, &c)
		}
	}
	t.Log(c.String())
	if c.refused < len(kinds)*writesPerKind/4 || c.accepted < len(kinds)*writesPerKind/8 {
		t.Errorf("generated writes are too one-sided: %s", c.String())
	}
}

type generator struct {
	rng *rand.Rand
	f   *fixture
}

func (g *generator) pick(options ...string) string { return options[g.rng.Intn(len(options))] }

func (g *generator) chance(n int) bool { return g.rng.Intn(n) == 0 }

// mostly returns valid most of the time, else any of the others.
func (g *generator) mostly(valid string, others ...string) string {
	if g.rng.Intn(4) != 0 {
		return valid
	}
	return g.pick(others...)
}

var signers = []string{"example.com/foo", "example.com/foo", "other.io/signer1", "kubernetes.io/kube-apiserver-client-pod",
	"nope.example.org/x", "", "foo", "example.com/a/b", "Example.com/x", "a.b/Bad_Path", "com/x", strings.Repeat("d", 64) + ".com/x",
	"example.com/" + strings.Repeat("p", 300)}

func (g *generator) meta(name string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: g.mostly(name, "", "Bad_Name", "a/b", "x:y", strings.Repeat("n", 254))}
	if g.chance(12) {
		m.GenerateName = g.pick("gen-", "Bad_", "a/", "example.com:foo:")
	}
	if g.chance(8) {
		m.Labels = map[string]string{g.mostly("app", "bad key!"): g.mostly("web", "bad value!")}
	}
	if g.chance(15) {
		m.Finalizers = []string{g.pick("cleanup", "example.com/x", "kubernetes")}
	}
	if g.chance(10) {
		m.Generation = int64(g.rng.Intn(4) - 1)
	}
	return m
}

func (g *generator) object(kind string) runtime.Object {
	if kind == "ClusterTrustBundle" {
		signer := g.pick(signers...)
		name := strings.ReplaceAll(signer, "/", ":") + ":" + g.mostly("b1", "", "Bad", "x:y")
		if signer == "" {
			name = "bundle-1"
		}
		return &certificatesv1.ClusterTrustBundle{ObjectMeta: g.meta(name),
			Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: g.bundle()}}
	}
	m := g.meta("pcr-1")
	m.Namespace = g.mostly("default", "", "Bad_NS")
	return &certificatesv1.PodCertificateRequest{ObjectMeta: m, Spec: g.requestSpec()}
}

// bundle is one to four pieces of PEM and garbage.
func (g *generator) bundle() string {
	f := g.f
	if g.chance(20) {
		return g.pick("", "garbage", strings.Repeat(f.goodCA1, (1<<20)/len(f.goodCA1)+1))
	}
	var b strings.Builder
	for range 1 + g.rng.Intn(4) {
		if g.rng.Intn(3) > 0 {
			b.WriteString(g.pick(f.goodCA1, f.goodCA2))
		} else {
			b.WriteString(g.pick(f.notCA, f.headerBlock, f.badType, f.unparsable, "garbage\n"))
		}
	}
	return b.String()
}

func (g *generator) requestSpec() certificatesv1.PodCertificateRequestSpec {
	s := certificatesv1.PodCertificateRequestSpec{SignerName: g.pick(signers...), PodName: g.mostly("pod-1", "", "Pod_1", "a.b"),
		PodUID: types.UID(g.mostly("pod-uid", "", strings.Repeat("u", 129))), ServiceAccountName: g.mostly("default", "", "SA"),
		ServiceAccountUID: types.UID(g.mostly("sa-uid", "", strings.Repeat("u", 129))), NodeName: types.NodeName(g.mostly("node-1", "", "Node_1")),
		NodeUID: types.UID(g.mostly("node-uid", "", strings.Repeat("u", 129)))}
	if !g.chance(3) {
		s.MaxExpirationSeconds = ptr.To(int32(g.pick2(3600, 3599, 86400, 86401, 91*86400, 91*86400+1, 7200, -1)))
	}
	st := g.f.stubs[g.rng.Intn(len(g.f.stubs))]
	switch g.rng.Intn(8) {
	case 0:
		s.StubPKCS10Request = nil
	case 1:
		s.StubPKCS10Request = badSignature(st.der)
	case 2:
		s.StubPKCS10Request = []byte("junk")
	default:
		s.StubPKCS10Request = st.der
	}
	if g.chance(3) {
		s.UnverifiedUserAnnotations = map[string]string{g.mostly("example.com/a", "a", "", "Example.com/B", "a/b/c"): "v"}
		if g.chance(3) {
			s.UnverifiedUserAnnotations[g.pick("x.io/y", "bad key!")] = "w"
		}
	}
	return s
}

func (g *generator) pick2(options ...int) int { return options[g.rng.Intn(len(options))] }

// stored is an object as stored: defaulted, with a valid name and a
// resourceVersion, and otherwise whatever was allowed when it was written
// (possibly no longer valid).
func (g *generator) stored(kind string) runtime.Object {
	obj := g.object(kind)
	m := metaOf(obj)
	m.GenerateName, m.ResourceVersion, m.Generation, m.Finalizers = "", "7", 0, nil
	m.Annotations, m.Labels = nil, nil
	switch o := obj.(type) {
	case *certificatesv1.ClusterTrustBundle:
		m.Name = strings.ReplaceAll(o.Spec.SignerName, "/", ":") + ":b1"
		if o.Spec.SignerName == "" {
			m.Name = "bundle-1"
		}
	case *certificatesv1.PodCertificateRequest:
		m.Name, m.Namespace = "pcr-1", "default"
		if g.chance(4) {
			o.Status.Conditions = []metav1.Condition{condition(g.pick("Issued", "Denied", "Failed", "Other"), g.pick("True", "False"))}
		}
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
	case *certificatesv1.ClusterTrustBundle:
		switch g.rng.Intn(4) {
		case 0:
			o.Spec.TrustBundle = g.bundle()
		case 1:
			o.Spec.SignerName = g.pick(signers...)
		}
	case *certificatesv1.PodCertificateRequest:
		if g.chance(3) {
			fresh := g.requestSpec()
			for _, name := range []string{"signer", "pod name", "expiration", "stub", "annotations", "sa"} {
				if g.chance(3) {
					requestSpecEdits[name](&o.Spec)
				}
			}
			if g.chance(4) {
				o.Spec = fresh
			}
		}
		if g.chance(4) {
			o.Status.Conditions = []metav1.Condition{condition("Denied", "True")}
		}
	}
	return obj
}

// changeStatus gives a status write a new status: terminal conditions of
// every kind, issued chains good and bad.
func (g *generator) changeStatus(r *certificatesv1.PodCertificateRequest) {
	switch g.rng.Intn(6) {
	case 0:
		return
	case 1:
		r.Status = certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{condition(g.pick("Denied", "Failed", "Other", "Issued"),
			g.pick("True", "True", "False", "Unknown", ""))}}
		if g.chance(4) {
			r.Status.Conditions = append(r.Status.Conditions, condition(g.pick("Denied", "Failed"), "True"))
		}
		if g.chance(4) {
			r.Status.CertificateChain = "x"
		}
	default:
		r.Status = g.issuance(r)
	}
}

// issuance is an Issued status for r's key (or another), with times and
// names right or wrong.
func (g *generator) issuance(r *certificatesv1.PodCertificateRequest) certificatesv1.PodCertificateRequestStatus {
	now := time.Now().Truncate(time.Second)
	key := g.f.stubs[0].key.Public()
	for _, st := range g.f.stubs {
		if string(st.der) == string(r.Spec.StubPKCS10Request) && !g.chance(6) {
			key = st.key.Public()
		}
	}
	o := leafOptions{notBefore: now.Add(time.Duration(g.pick2(0, 0, 0, -4, 6, -30)) * time.Minute)}
	o.notAfter = o.notBefore.Add(time.Duration(g.pick2(24*60, 24*60, 60, 59, 25*60, 91*24*60)) * time.Minute)
	if g.chance(6) {
		o.dnsNames = []string{g.pick("ok.example.com", "a..b", ".a", "b.", "")}
	}
	if g.chance(8) {
		o.emails = []string{g.pick("pod@example.com", "not an address")}
	}
	chain := g.f.issue(key, o)
	if g.chance(6) {
		chain = g.pick("", "garbage", g.f.badType, g.f.unparsable) + g.pick("", chain)
	}
	if g.chance(6) {
		chain += g.pick(g.f.goodCA2, g.f.badType, g.f.unparsable)
	}
	st := certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{condition("Issued", "True")}, CertificateChain: chain}
	if !g.chance(8) {
		st.NotBefore = ptr.To(metav1.NewTime(o.notBefore.Add(time.Duration(g.pick2(0, 0, 0, 0, 1)) * time.Second)))
	}
	if !g.chance(8) {
		st.NotAfter = ptr.To(metav1.NewTime(o.notAfter.Add(time.Duration(g.pick2(0, 0, 0, 0, -1)) * time.Second)))
	}
	if !g.chance(8) {
		st.BeginRefreshAt = ptr.To(metav1.NewTime(o.notBefore.Add(time.Duration(g.pick2(30, 30, 30, 9, 24*60-9, 24*60)) * time.Minute)))
	}
	return st
}

func metaOf(obj runtime.Object) *metav1.ObjectMeta {
	switch o := obj.(type) {
	case *certificatesv1.ClusterTrustBundle:
		return &o.ObjectMeta
	case *certificatesv1.PodCertificateRequest:
		return &o.ObjectMeta
	}
	panic(fmt.Sprintf("not a certificates object: %T", obj))
}
