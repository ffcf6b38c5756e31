package certificatesvalidation

import (
	"crypto/x509"
	"fmt"
	"math/rand"
	"regexp"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// csrWrites are the generated CertificateSigningRequest creates, updates,
// status and approval writes compared.
const csrWrites = 800

// storedTime is when a stored request's conditions were written; writes
// stamp the conditions they add with now, on either side.
var (
	storedTime = metav1.NewTime(time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC))
	stampedAt  = metav1.NewTime(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
	testStart  = time.Now().Add(-time.Second)
)

// clearNewConditionTimes puts one time in place of the condition times a
// write stamped with now, in prepared CertificateSigningRequests.
func clearNewConditionTimes(objs ...runtime.Object) {
	for _, o := range objs {
		csr, ok := o.(*certificatesv1.CertificateSigningRequest)
		if !ok {
			continue
		}
		for i := range csr.Status.Conditions {
			c := &csr.Status.Conditions[i]
			for _, t := range []*metav1.Time{&c.LastUpdateTime, &c.LastTransitionTime} {
				if t.After(testStart) {
					*t = stampedAt
				}
			}
		}
	}
}

var timestamp = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

// withoutNow is e with the times a write stamped (which a "may not modify"
// detail shows, at a second's precision) written <now>.
func withoutNow(e *field.Error) *field.Error {
	out := *e
	out.Detail = timestamp.ReplaceAllStringFunc(e.Detail, func(s string) string {
		if t, err := time.Parse(time.RFC3339, s); err == nil && !t.Before(testStart.Truncate(time.Second)) {
			return "<now>"
		}
		return s
	})
	return &out
}

// CertificateSigningRequests: creates (requests good and bad, usages
// unknown or repeated, signer names, expirations), and writes of the main
// resource, /status and /approval over stored requests that may hold what
// validation no longer allows (the legacy signer, unknown or repeated
// usages, Approved with Denied, empty or repeated condition types, a
// broken certificate): conditions added, removed, changed or unstamped,
// certificates set, changed or cleared, labels changed.
func TestCSRGenerated(t *testing.T) {
	g := &generator{rng: rand.New(rand.NewSource(37)), f: fixtureOnce()}
	cat := registry.NewCatalogue()
	var c tally
	for i := range csrWrites {
		var w write
		switch g.rng.Intn(4) {
		case 0:
			w = write{name: fmt.Sprintf("CSR #%d create", i), obj: g.csr(), defaulted: !g.chance(8)}
		default:
			old := g.storedCSR()
			w = write{old: old, obj: g.changedCSR(old), defaulted: true}
			switch g.rng.Intn(3) {
			case 0:
				w.status = true
			case 1:
				w.approval = true
			}
			w.name = fmt.Sprintf("CSR #%d update (%q)", i, w.subresource())
		}
		compare(t, cat, w, &c)
	}
	t.Log(c.String())
	if c.refused < csrWrites/4 || c.accepted < csrWrites/5 {
		t.Errorf("generated writes are too one-sided: %s", c.String())
	}
}

var (
	csrSigners = []string{"example.com/foo", "kubernetes.io/kube-apiserver-client", "kubernetes.io/kubelet-serving",
		"kubernetes.io/legacy-unknown", "", "foo", "Example.com/x"}
	csrUsages = []certificatesv1.KeyUsage{"digital signature", "key encipherment", "client auth", "server auth", "any", "bogus", "Client Auth", ""}
)

// csrRequest is a PEM PKCS#10 request, mostly good.
func (g *generator) csrRequest() []byte {
	st := g.f.stubs[g.rng.Intn(len(g.f.stubs))]
	switch g.rng.Intn(16) {
	case 0:
		return nil
	case 1:
		return []byte(pemOf("CERTIFICATE REQUEST", nil, badSignature(st.der)))
	case 2:
		return []byte(g.pick("junk", pemOf("CERTIFICATE", nil, st.der), pemOf("CERTIFICATE REQUEST", nil, []byte("junk"))))
	}
	return []byte(pemOf("CERTIFICATE REQUEST", nil, st.der))
}

func (g *generator) csrSpec() certificatesv1.CertificateSigningRequestSpec {
	s := certificatesv1.CertificateSigningRequestSpec{Request: g.csrRequest(), SignerName: g.mostly("example.com/foo", csrSigners...)}
	n := 1 + g.rng.Intn(3)
	if g.chance(12) {
		n = 0
	}
	for range n {
		s.Usages = append(s.Usages, g.mostlyUsage())
	}
	if g.chance(3) {
		s.ExpirationSeconds = ptr.To(int32(g.pick2(599, 600, 3600)))
	}
	if g.chance(4) {
		s.Username, s.Groups = "someone", []string{"system:authenticated"}
	}
	return s
}

// mostlyUsage is mostly one of the first four usages, else any.
func (g *generator) mostlyUsage() certificatesv1.KeyUsage {
	if g.rng.Intn(8) != 0 {
		return csrUsages[g.rng.Intn(4)]
	}
	return csrUsages[g.rng.Intn(len(csrUsages))]
}

func (g *generator) csr() *certificatesv1.CertificateSigningRequest {
	m := g.meta("csr-1")
	if g.chance(5) {
		m.Name = g.pick("Bad_Name", "a/b", "x:y")
	}
	r := &certificatesv1.CertificateSigningRequest{ObjectMeta: m, Spec: g.csrSpec()}
	if g.chance(4) {
		r.Status.Conditions = g.csrConditions(storedTime)
		r.Status.Certificate = g.csrCertificate()
	}
	return r
}

var (
	csrConditionTypes    = []string{"Approved", "Denied", "Failed", "Custom", "Custom", ""}
	csrConditionStatuses = []string{"True", "True", "True", "True", "False", "Unknown", ""}
)

func (g *generator) csrCondition(at metav1.Time) certificatesv1.CertificateSigningRequestCondition {
	c := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.RequestConditionType(g.pick(csrConditionTypes...)),
		Status: corev1.ConditionStatus(g.pick(csrConditionStatuses...)), Reason: g.pick("", "AutoApproved"), LastUpdateTime: at,
		LastTransitionTime: at}
	if g.chance(4) {
		c.LastUpdateTime, c.LastTransitionTime = metav1.Time{}, metav1.Time{}
	}
	return c
}

// csrConditions are zero to three conditions of any type and status.
func (g *generator) csrConditions(at metav1.Time) []certificatesv1.CertificateSigningRequestCondition {
	var out []certificatesv1.CertificateSigningRequestCondition
	for range g.rng.Intn(4) {
		out = append(out, g.csrCondition(at))
	}
	return out
}

// csrCertificate is an issued certificate, mostly good, or nothing.
func (g *generator) csrCertificate() []byte {
	f := g.f
	switch g.rng.Intn(8) {
	case 0, 1:
		return nil
	case 2:
		key, _ := x509.MarshalPKCS8PrivateKey(f.stubs[2].key)
		return []byte(pemOf("PRIVATE KEY", nil, key))
	case 3:
		return []byte(g.pick(f.headerBlock, "garbage", f.unparsable, f.badType, f.goodCA1+"garbage"))
	}
	return []byte(g.pick(f.goodCA1, f.goodCA2, f.notCA, f.goodCA1+f.goodCA2))
}

// storedCSR is a request as stored: defaulted, named, with whatever
// was allowed when it was written, or before.
func (g *generator) storedCSR() *certificatesv1.CertificateSigningRequest {
	r := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "csr-1", ResourceVersion: "7", UID: "uid-1"},
		Spec: g.csrSpec()}
	r.Spec.Username = "creator"
	if g.chance(4) {
		r.Spec.Usages = append(r.Spec.Usages, g.pick2u("bogus", "client auth", "digital signature"))
	}
	r.Status.Conditions = g.csrConditions(storedTime)
	if g.chance(4) {
		r.Status.Conditions = append(r.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: "Approved", Status: "True",
			LastUpdateTime: storedTime, LastTransitionTime: storedTime},
			certificatesv1.CertificateSigningRequestCondition{Type: "Denied", Status: "True", LastUpdateTime: storedTime, LastTransitionTime: storedTime})
	}
	if g.chance(2) {
		r.Status.Certificate = g.csrCertificate()
	}
	legacyscheme.Scheme.Default(r)
	return r
}

func (g *generator) pick2u(options ...certificatesv1.KeyUsage) certificatesv1.KeyUsage {
	return options[g.rng.Intn(len(options))]
}

// changedCSR is a write over old: labels, spec, conditions and
// certificate changed or kept.
func (g *generator) changedCSR(old *certificatesv1.CertificateSigningRequest) *certificatesv1.CertificateSigningRequest {
	r := old.DeepCopy()
	if g.chance(4) {
		r.Labels = map[string]string{"tier": g.mostly("gold", "bad value!"), g.mostly("app", "bad key!"): "x"}
	}
	if g.chance(15) {
		r.ResourceVersion = ""
	}
	if g.chance(25) {
		r.Name = "renamed"
	}
	if g.chance(5) {
		r.Spec = g.csrSpec()
	}
	for range g.rng.Intn(3) {
		g.changeConditions(r)
	}
	switch g.rng.Intn(4) {
	case 0:
		r.Status.Certificate = g.csrCertificate()
	case 1:
		r.Status.Certificate = []byte(g.f.issue(g.f.stubs[2].key.Public(), leafOptions{notBefore: storedTime.Time,
			notAfter: storedTime.Add(time.Hour)}))
	}
	return r
}

// changeConditions adds, removes, changes or unstamps one condition, or
// replaces them all.
func (g *generator) changeConditions(r *certificatesv1.CertificateSigningRequest) {
	conds := r.Status.Conditions
	switch n := len(conds); {
	case n == 0 || g.chance(4):
		r.Status.Conditions = append(conds, g.csrCondition(metav1.Time{}))
	case g.chance(3):
		i := g.rng.Intn(n)
		r.Status.Conditions = append(conds[:i:i], conds[i+1:]...)
	case g.chance(2):
		c := &conds[g.rng.Intn(n)]
		c.Status = corev1.ConditionStatus(g.pick(csrConditionStatuses...))
		if g.chance(2) {
			c.LastUpdateTime, c.LastTransitionTime = metav1.Time{}, metav1.Time{}
		}
	case g.chance(2):
		c := &conds[g.rng.Intn(n)]
		c.Reason, c.Message = "Changed", strings.Repeat("m", g.rng.Intn(3))
		c.LastUpdateTime = metav1.Time{}
	default:
		r.Status.Conditions = g.csrConditions(metav1.Time{})
	}
}
