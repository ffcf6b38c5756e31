package certificates

import (
	"errors"
	"math/rand"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1alpha1 "k8s.io/api/certificates/v1alpha1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/admission"
)

var signers = []string{"abc.com/xyz", "abc.com/other", certificatesv1.KubeAPIServerClientSignerName,
	certificatesv1.KubeletServingSignerName, "noslash", "", "a/b/c", "example.com/"}

func pick[T any](r *rand.Rand, list ...T) T { return list[r.Intn(len(list))] }

// genPolicy allows a random few verb/name pairs, names and wildcards alike.
func genPolicy(r *rand.Rand) policy {
	p := policy{allow: map[string]bool{}, fallback: pick(r, admission.AuthorizationDeny, admission.AuthorizationNoOpinion)}
	for i := r.Intn(4); i > 0; i-- {
		name := pick(r, signers...)
		if r.Intn(2) == 0 {
			name = pick(r, "abc.com/*", "kubernetes.io/*", "noslash/*", "/*", "a/*", "example.com/*")
		}
		p.allow[key(pick(r, "approve", "sign", "attest", "update"), name)] = true
	}
	if r.Intn(10) == 0 {
		p.err = errors.New("authorizer failed")
	}
	return p
}

type generator struct {
	r    *rand.Rand
	pems [][]byte
}

func (g *generator) csr() *certificatesv1.CertificateSigningRequest {
	c := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "n", ResourceVersion: "3"},
		Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: pick(g.r, signers...), Request: pick(g.r, g.pems...)}}
	c.Status.Certificate = pick(g.r, nil, []byte{}, []byte("data"), []byte("other"))
	for i := g.r.Intn(3); i > 0; i-- {
		c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type:   pick(g.r, certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed),
			Status: pick(g.r, corev1.ConditionTrue, corev1.ConditionFalse), Reason: pick(g.r, "", "r")})
	}
	return c
}

// editCSR changes some of a copy of c, or nothing.
func (g *generator) editCSR(c *certificatesv1.CertificateSigningRequest) *certificatesv1.CertificateSigningRequest {
	c = c.DeepCopy()
	switch g.r.Intn(6) {
	case 0:
		c.Spec.SignerName = pick(g.r, signers...)
	case 1:
		c.Status.Certificate = pick(g.r, nil, []byte{}, []byte("data"), []byte("other"))
	case 2:
		c.Status.Conditions = nil
	case 3:
		if len(c.Status.Conditions) > 0 {
			c.Status.Conditions[0].Message = "changed"
		}
	case 4:
		c.Labels = map[string]string{"a": "b"}
	}
	return c
}

func (g *generator) bundle(version string) runtime.Object {
	meta := metav1.ObjectMeta{Name: "n", ResourceVersion: "3"}
	signer, pemText := pick(g.r, signers...), pick(g.r, "pem-1", "pem-2")
	switch version {
	case "v1":
		return &certificatesv1.ClusterTrustBundle{ObjectMeta: meta, Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: pemText}}
	case "v1alpha1":
		return &certificatesv1alpha1.ClusterTrustBundle{ObjectMeta: meta, Spec: certificatesv1alpha1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: pemText}}
	}
	return &certificatesv1beta1.ClusterTrustBundle{ObjectMeta: meta, Spec: certificatesv1beta1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: pemText}}
}

// editBundle changes some of a copy of b: garbage-collection metadata,
// other metadata, the spec, or nothing.
func (g *generator) editBundle(b runtime.Object) runtime.Object {
	b = b.DeepCopyObject()
	m, _ := meta.Accessor(b)
	for i := g.r.Intn(3); i > 0; i-- {
		switch g.r.Intn(9) {
		case 0:
			m.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "o", UID: "u", BlockOwnerDeletion: ptr.To(g.r.Intn(2) == 0)}})
		case 1:
			m.SetFinalizers([]string{"example.com/f"})
		case 2:
			m.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate}})
		case 3:
			m.SetLabels(map[string]string{"a": "b"})
		case 4:
			m.SetAnnotations(map[string]string{"a": "b"})
		case 5:
			m.SetResourceVersion("4")
		case 6:
			switch o := b.(type) {
			case *certificatesv1.ClusterTrustBundle:
				o.Spec.TrustBundle = "pem-3"
			case *certificatesv1beta1.ClusterTrustBundle:
				o.Spec.TrustBundle = "pem-3"
			case *certificatesv1alpha1.ClusterTrustBundle:
				o.Spec.TrustBundle = "pem-3"
			}
		case 7:
			switch o := b.(type) {
			case *certificatesv1.ClusterTrustBundle:
				o.Spec.SignerName = pick(g.r, signers...)
			case *certificatesv1beta1.ClusterTrustBundle:
				o.Spec.SignerName = pick(g.r, signers...)
			case *certificatesv1alpha1.ClusterTrustBundle:
				o.Spec.SignerName = pick(g.r, signers...)
			}
		case 8:
			m.SetSelfLink("/x")
		}
	}
	return b
}

func (g *generator) request(plugin pluginName) request {
	r := g.r
	req := request{op: pick(r, admission.Create, admission.Update, admission.Update, admission.Delete, admission.Connect),
		name: pick(r, "n", ""), user: pick(r, "alice", "bob"), groups: pick(r, nil, []string{"system:authenticated"})}
	version := pick(r, "v1", "v1beta1", "v1alpha1")
	kind := r.Intn(8)
	if r.Intn(10) < 7 { // mostly what the plugin looks at
		kind = map[pluginName]int{approval: 0, signing: 0, subject: 0, ctb: 4}[plugin]
	}
	switch kind {
	case 0, 1, 2, 3:
		req.resource = csrs
		obj := g.csr()
		req.obj, req.old = obj, g.editCSR(obj)
		if r.Intn(2) == 0 {
			req.obj, req.old = req.old, req.obj
		}
	case 4, 5, 6:
		req.resource = schema.GroupVersionResource{Group: "certificates.k8s.io", Version: version, Resource: "clustertrustbundles"}
		obj := g.bundle(version)
		req.obj, req.old = obj, g.editBundle(obj)
		if r.Intn(2) == 0 {
			req.obj, req.old = req.old, req.obj
		}
	default:
		req.resource = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
		req.obj = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
		req.old = req.obj
	}
	req.subresource = pick(r, "", "", "approval", "status", "other")
	if r.Intn(10) < 7 {
		switch plugin {
		case approval:
			req.op, req.subresource = admission.Update, "approval"
		case signing:
			req.op, req.subresource = admission.Update, "status"
		case subject:
			req.op, req.subresource = admission.Create, ""
			if c, ok := req.obj.(*certificatesv1.CertificateSigningRequest); ok && r.Intn(2) == 0 {
				c.Spec.SignerName = certificatesv1.KubeAPIServerClientSignerName
			}
		case ctb:
			req.op = pick(r, admission.Create, admission.Update)
		}
	}
	switch r.Intn(20) {
	case 0:
		req.obj = &certificatesv1.CertificateSigningRequestList{}
	case 1:
		req.old = &certificatesv1beta1.ClusterTrustBundleList{}
	case 2:
		req.obj = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	}
	switch req.op {
	case admission.Create:
		req.old = nil
	case admission.Delete:
		req.obj = nil
	case admission.Connect:
		req.obj, req.old = nil, nil
	}
	return req
}

func TestGenerated(t *testing.T) {
	g := &generator{r: rand.New(rand.NewSource(13)), pems: [][]byte{
		pemWithGroups(t, "system:masters"), pemWithGroups(t, "devs", "system:masters"), pemWithGroups(t, "system:admin"),
		pemWithGroups(t), []byte("garbage"), []byte("-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n"), nil,
	}}
	const n = 4000
	counts := map[string]int{}
	for i := 0; i < n; i++ {
		name := pick(g.r, approval, signing, subject, ctb)
		p, gate, req := genPolicy(g.r), g.r.Intn(4) != 0, g.request(name)
		out, ok := compare(t, name, p, gate, req)
		if !ok && t.Failed() && counts["failed"] > 10 {
			t.Fatal("too many differences")
		}
		switch {
		case !ok:
			counts["failed"]++
		case !out.handles:
			counts[string(name)+" not handled"]++
		case out.err != "":
			counts[string(name)+" refused"]++
		default:
			counts[string(name)+" admitted"]++
		}
	}
	t.Logf("%d generated requests: %v", n, counts)
	for _, name := range []pluginName{approval, signing, subject, ctb} {
		if counts[string(name)+" refused"] == 0 || counts[string(name)+" admitted"] == 0 {
			t.Errorf("%s: generated requests never both refused and admitted: %v", name, counts)
		}
	}
}
