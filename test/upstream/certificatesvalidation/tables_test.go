package certificatesvalidation

import (
	"fmt"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// The inputs of upstream's own validation tests
// (pkg/apis/certificates/validation/validation_test.go:
// TestValidateClusterTrustBundle, TestValidateClusterTrustBundleUpdate,
// TestValidatePodCertificateRequestCreate,
// TestValidatePodCertificateRequestUpdate,
// TestValidatePodCertificateRequestStatusUpdate) as v1 objects, with fresh
// keys and certificates of the same kinds. v1 has no pkixPublicKey or
// proofOfPossession, so upstream's cases of those fields become stub
// PKCS#10 requests for the same keys.

func ctb(name, signer, bundle string) *certificatesv1.ClusterTrustBundle {
	return &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: bundle}}
}

func upstreamBundles(f *fixture) map[string]*certificatesv1.ClusterTrustBundle {
	tooBig := strings.Repeat(f.goodCA1+"\n", (1<<20)/len(f.goodCA1)+1)
	alternate := strings.ReplaceAll(f.goodCA1, "\n", "\n\t\n")
	return map[string]*certificatesv1.ClusterTrustBundle{
		"valid, no signer name":                          ctb("foo", "", f.goodCA1),
		"invalid, too big":                               ctb("foo", "", tooBig),
		"invalid, no signer name, invalid name":          ctb("k8s.io:bar:foo", "", f.goodCA1),
		"valid, with signer name":                        ctb("k8s.io:foo:bar", "k8s.io/foo", f.goodCA1),
		"invalid, with signer name, missing prefix":      ctb("foo:bar", "k8s.io/foo", f.goodCA1),
		"invalid, with signer name, empty name suffix":   ctb("k8s.io:foo:", "k8s.io/foo", f.goodCA1),
		"invalid, with signer name, bad name suffix":     ctb("k8s.io:foo:123notvalidDNSSubdomain", "k8s.io/foo", f.goodCA1),
		"valid, with signer name, inter-block garbage":   ctb("k8s.io:foo:abc", "k8s.io/foo", "garbage\n"+f.goodCA1+"\ngarbage\n"+f.goodCA2),
		"invalid, no signer name, no trust anchors":      ctb("foo", "", ""),
		"invalid, no trust anchors":                      ctb("k8s.io:foo:abc", "k8s.io/foo", ""),
		"invalid, bad signer name":                       ctb("invalid:foo", "invalid", f.goodCA1),
		"invalid, no blocks":                             ctb("foo", "", "non block garbage"),
		"invalid, bad block type":                        ctb("foo", "", f.goodCA1+f.badType),
		"invalid, block with headers":                    ctb("foo", "", f.goodCA1+f.headerBlock),
		"invalid, cert is not a CA cert":                 ctb("foo", "", f.notCA),
		"invalid, duplicated blocks":                     ctb("foo", "", f.goodCA1+f.goodCA1),
		"invalid, non-certificate entry":                 ctb("foo", "", f.unparsable),
		"valid, alternate line breaks":                   ctb("foo", "", alternate),
		"invalid, two duplicates and a good anchor":      ctb("foo", "", f.goodCA1+f.goodCA2+f.goodCA1+f.goodCA2+f.goodCA1),
		"invalid, signer with a long path":               ctb("foo", "example.com/"+strings.Repeat("a.", 200)+"b", f.goodCA1),
		"invalid, signer with bad domain and path":       ctb("foo", "Bad_Domain.com/Bad_Path", f.goodCA1),
		"invalid, signer with a domain label too long":   ctb("foo", strings.Repeat("d", 64)+".com/x", f.goodCA1),
		"invalid, signer with a domain too long":         ctb("foo", strings.Repeat("d.", 127)+"com/x", f.goodCA1),
		"invalid, generateName with a bad prefix":        {ObjectMeta: metav1.ObjectMeta{Name: "k8s.io:foo:x", GenerateName: "bad:"}, Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "k8s.io/foo", TrustBundle: f.goodCA1}},
		"invalid, everything wrong, and a bad label key": {ObjectMeta: metav1.ObjectMeta{Name: "x:y", Labels: map[string]string{"bad key!": "v"}}, Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "nope", TrustBundle: "garbage"}},
	}
}

// upstreamBundleUpdates are TestValidateClusterTrustBundleUpdate's updates
// of its old bundle (and the stored garbage that is not parsed again).
func upstreamBundleUpdates(f *fixture) (map[string]*certificatesv1.ClusterTrustBundle, *certificatesv1.ClusterTrustBundle) {
	old := ctb("k8s.io:foo:bar", "k8s.io/foo", f.goodCA1)
	edit := func(fn func(b *certificatesv1.ClusterTrustBundle)) *certificatesv1.ClusterTrustBundle {
		b := old.DeepCopy()
		fn(b)
		return b
	}
	return map[string]*certificatesv1.ClusterTrustBundle{
		"changing signer name disallowed": edit(func(b *certificatesv1.ClusterTrustBundle) { b.Spec.SignerName = "k8s.io/bar" }),
		"adding certificate allowed":      edit(func(b *certificatesv1.ClusterTrustBundle) { b.Spec.TrustBundle += f.goodCA2 }),
		"emptying trustBundle disallowed": edit(func(b *certificatesv1.ClusterTrustBundle) { b.Spec.TrustBundle = "" }),
		"emptying trustBundle (replace with non-block garbage) disallowed": edit(func(b *certificatesv1.ClusterTrustBundle) {
			b.Spec.TrustBundle = "non block garbage"
		}),
		"removing signer name": edit(func(b *certificatesv1.ClusterTrustBundle) { b.Spec.SignerName = "" }),
		"renaming":             edit(func(b *certificatesv1.ClusterTrustBundle) { b.Name = "k8s.io:foo:baz" }),
		"labels only":          edit(func(b *certificatesv1.ClusterTrustBundle) { b.Labels = map[string]string{"a": "b"} }),
	}, old
}

func pcr(f *fixture, edit func(s *certificatesv1.PodCertificateRequestSpec)) *certificatesv1.PodCertificateRequest {
	r := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Name: "foo", Namespace: "default", ResourceVersion: "1"},
		Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/foo", PodName: "pod-1", PodUID: "pod-uid-1",
			ServiceAccountName: "sa-1", ServiceAccountUID: "sa-uid-1", NodeName: "node-1", NodeUID: "node-uid-1",
			MaxExpirationSeconds: ptr.To[int32](86400), StubPKCS10Request: f.stubs[0].der}}
	if edit != nil {
		edit(&r.Spec)
	}
	return r
}

func upstreamRequests(f *fixture) map[string]*certificatesv1.PodCertificateRequest {
	out := map[string]*certificatesv1.PodCertificateRequest{}
	for _, s := range f.stubs {
		out[s.name+" PCR"] = pcr(f, func(sp *certificatesv1.PodCertificateRequestSpec) { sp.StubPKCS10Request = s.der })
		out[s.name+" PCR, bad signature"] = pcr(f, func(sp *certificatesv1.PodCertificateRequestSpec) { sp.StubPKCS10Request = badSignature(s.der) })
	}
	for name, edit := range map[string]func(s *certificatesv1.PodCertificateRequestSpec){
		"bad signer name": func(s *certificatesv1.PodCertificateRequestSpec) { s.SignerName = "foo" },
		"bad pod name":    func(s *certificatesv1.PodCertificateRequestSpec) { s.PodName = "foo_bar" },
		"bad pod uid":     func(s *certificatesv1.PodCertificateRequestSpec) { s.PodUID = "" },
		"long pod uid": func(s *certificatesv1.PodCertificateRequestSpec) {
			s.PodUID = types.UID("u" + strings.Repeat("x", 128))
		},
		"bad service account name": func(s *certificatesv1.PodCertificateRequestSpec) { s.ServiceAccountName = "foo_bar" },
		"bad service account uid":  func(s *certificatesv1.PodCertificateRequestSpec) { s.ServiceAccountUID = "" },
		"bad node name":            func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeName = "foo_bar" },
		"bad node uid":             func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeUID = "" },
		"long node uid": func(s *certificatesv1.PodCertificateRequestSpec) {
			s.NodeUID = types.UID("u" + strings.Repeat("x", 128))
		},
		"maxExpirationSeconds missing": func(s *certificatesv1.PodCertificateRequestSpec) { s.MaxExpirationSeconds = nil },
		"maxExpirationSeconds too large": func(s *certificatesv1.PodCertificateRequestSpec) {
			s.MaxExpirationSeconds = ptr.To[int32](91*86400 + 1)
		},
		"maxExpirationSeconds too small": func(s *certificatesv1.PodCertificateRequestSpec) { s.MaxExpirationSeconds = ptr.To[int32](3599) },
		"maxExpirationSeconds too large (Kubernetes signer)": func(s *certificatesv1.PodCertificateRequestSpec) {
			s.SignerName, s.MaxExpirationSeconds = "kubernetes.io/foo", ptr.To[int32](86401)
		},
		"stub request too long": func(s *certificatesv1.PodCertificateRequestSpec) { s.StubPKCS10Request = make([]byte, 10*1024+1) },
		"no stub request":       func(s *certificatesv1.PodCertificateRequestSpec) { s.StubPKCS10Request = nil },
		"bad user annotations key name": func(s *certificatesv1.PodCertificateRequestSpec) {
			s.UnverifiedUserAnnotations = map[string]string{"test/domain/foo": "bar"}
		},
		"bad user annotations key prefix too long": func(s *certificatesv1.PodCertificateRequestSpec) {
			s.UnverifiedUserAnnotations = map[string]string{strings.Repeat("a", 254) + "/foo": "bar"}
		},
		"bad user annotations key/value total size too long": func(s *certificatesv1.PodCertificateRequestSpec) {
			s.UnverifiedUserAnnotations = map[string]string{"test.domain/foo": strings.Repeat("a", 256*1024)}
		},
		"user annotations without a domain and empty": func(s *certificatesv1.PodCertificateRequestSpec) {
			s.UnverifiedUserAnnotations = map[string]string{"foo": "1", "": "2", "Example.COM/Upper": "3"}
		},
		"empty user annotations": func(s *certificatesv1.PodCertificateRequestSpec) { s.UnverifiedUserAnnotations = map[string]string{} },
	} {
		out[name] = pcr(f, edit)
	}
	return out
}

// requestSpecEdits are TestValidatePodCertificateRequestUpdate's changes
// of spec fields, one each.
var requestSpecEdits = map[string]func(s *certificatesv1.PodCertificateRequestSpec){
	"signer":   func(s *certificatesv1.PodCertificateRequestSpec) { s.SignerName = "example.com/bar" },
	"pod name": func(s *certificatesv1.PodCertificateRequestSpec) { s.PodName = "pod-2" },
	"pod uid":  func(s *certificatesv1.PodCertificateRequestSpec) { s.PodUID = "pod-uid-2" },
	"sa": func(s *certificatesv1.PodCertificateRequestSpec) {
		s.ServiceAccountName, s.ServiceAccountUID = "sa-2", "sa-uid-2"
	},
	"node":       func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeName, s.NodeUID = "node-2", "node-uid-2" },
	"expiration": func(s *certificatesv1.PodCertificateRequestSpec) { s.MaxExpirationSeconds = ptr.To[int32](3600) },
	"stub":       func(s *certificatesv1.PodCertificateRequestSpec) { s.StubPKCS10Request = []byte{1} },
	"annotations": func(s *certificatesv1.PodCertificateRequestSpec) {
		s.UnverifiedUserAnnotations = map[string]string{"example.com/a": "b"}
	},
	"empty to nil annotations": func(s *certificatesv1.PodCertificateRequestSpec) { s.UnverifiedUserAnnotations = map[string]string{} },
}

func condition(typ, status string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), Reason: "Reason", Message: "msg",
		LastTransitionTime: metav1.NewTime(time.Now().Truncate(time.Second))}
}

// issued is the status of a valid issuance to f's first key, now.
func issued(f *fixture, chainExtra string) certificatesv1.PodCertificateRequestStatus {
	now := time.Now().Truncate(time.Second)
	leaf := f.issue(f.stubs[0].key.Public(), leafOptions{notBefore: now, notAfter: now.Add(24 * time.Hour)})
	return certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{condition("Issued", "True")},
		CertificateChain: leaf + chainExtra, NotBefore: ptr.To(metav1.NewTime(now)), NotAfter: ptr.To(metav1.NewTime(now.Add(24 * time.Hour))),
		BeginRefreshAt: ptr.To(metav1.NewTime(now.Add(12 * time.Hour)))}
}

// upstreamStatuses are TestValidatePodCertificateRequestStatusUpdate's
// status writes over a pending request.
func upstreamStatuses(f *fixture) map[string]certificatesv1.PodCertificateRequestStatus {
	denied := certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{condition("Denied", "True")}}
	deniedWithChain := issued(f, "")
	deniedWithChain.Conditions = denied.Conditions
	failedWithChain := issued(f, "")
	failedWithChain.Conditions = []metav1.Condition{condition("Failed", "True")}
	return map[string]certificatesv1.PodCertificateRequestStatus{
		"changing nothing is allowed":                            {},
		"adding unknown condition types is not allowed":          {Conditions: []metav1.Condition{condition("Unknown", "True")}},
		"Issued must have status True":                           {Conditions: []metav1.Condition{condition("Issued", "False")}},
		"Denied must have status True":                           {Conditions: []metav1.Condition{condition("Denied", "Unknown")}},
		"Failed must have status True":                           {Conditions: []metav1.Condition{condition("Failed", "False")}},
		"transitioning to Denied status is allowed":              denied,
		"you can't issue a certificate if you set Denied status": deniedWithChain,
		"transitioning to Failed status is allowed":              {Conditions: []metav1.Condition{condition("Failed", "True")}},
		"you can't issue a certificate if you set Failed status": failedWithChain,
		"valid issuance":                                         issued(f, ""),
		"valid issuance with intermediate CA":                    issued(f, f.goodCA2),
		"two terminal conditions":                                {Conditions: []metav1.Condition{condition("Denied", "True"), condition("Failed", "True")}},
		"condition without reason":                               {Conditions: []metav1.Condition{{Type: "Denied", Status: "True"}}},
	}
}

func TestUpstreamTables(t *testing.T) {
	f := fixtureOnce()
	cat := registry.NewCatalogue()
	var c tally
	both := func(name string, obj runtime.Object) {
		for _, defaulted := range []bool{false, true} {
			compare(t, cat, write{name: fmt.Sprintf("%s (defaulted %v)", name, defaulted), obj: obj, defaulted: defaulted}, &c)
		}
	}
	for name, b := range upstreamBundles(f) {
		both("bundle "+name, b)
	}
	updates, oldBundle := upstreamBundleUpdates(f)
	for name, b := range updates {
		compare(t, cat, write{name: "bundle update " + name, obj: b, old: oldBundle, defaulted: true}, &c)
	}
	garbage := ctb("foo", "", "garbage")
	relabelled := garbage.DeepCopy()
	relabelled.Labels = map[string]string{"a": "b"}
	compare(t, cat, write{name: "allow any old garbage in the PEM field if we suppress parsing", obj: relabelled, old: garbage}, &c)
	for name, r := range upstreamRequests(f) {
		both("request "+name, r)
	}
	oldRequest := pcr(f, nil)
	for name, edit := range requestSpecEdits {
		r := oldRequest.DeepCopy()
		edit(&r.Spec)
		compare(t, cat, write{name: "request update " + name, obj: r, old: oldRequest, defaulted: true}, &c)
	}
	for name, st := range upstreamStatuses(f) {
		for _, signer := range []string{"example.com/foo", "nope.example.org/x"} {
			old := pcr(f, func(s *certificatesv1.PodCertificateRequestSpec) { s.SignerName = signer })
			r := old.DeepCopy()
			r.Status = st
			compare(t, cat, write{name: "request status " + name + " for " + signer, obj: r, old: old, status: true, defaulted: true}, &c)
			denied := old.DeepCopy()
			denied.Status.Conditions = []metav1.Condition{condition("Denied", "True")}
			r = denied.DeepCopy()
			r.Status = st
			compare(t, cat, write{name: "request status over a denied one " + name, obj: r, old: denied, status: true, defaulted: true}, &c)
		}
	}
	t.Log(c.String())
}
