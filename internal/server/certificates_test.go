package server

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// asUser is a client of admin's server acting as user.
func asUser(admin *rest.Config, user string) kubernetes.Interface {
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return kubernetes.NewForConfigOrDie(cfg)
}

// grant binds a new cluster role of rules to user.
func grant(t *testing.T, c kubernetes.Interface, name, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := t.Context()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	if _, err := c.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// testCAPEM is a new self-signed CA certificate in PEM.
func testCAPEM(t *testing.T) string {
	t.Helper()
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: time.Now(),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func signedBundle(t *testing.T) *certificatesv1.ClusterTrustBundle {
	return &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "example.com:bar:b1"},
		Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/bar", TrustBundle: testCAPEM(t)}}
}

// A ClusterTrustBundle naming a signer reaches ClusterTrustBundleAttest
// (on by default): a user who may create bundles but not attest for the
// signer is refused with upstream's message (recorded from kube-apiserver
// 1.37.2), one granted "attest" on the signer's name creates it.
func TestClusterTrustBundleAttest(t *testing.T) {
	_, admin := startWith(t, testOptions(t))
	c := kubernetes.NewForConfigOrDie(admin)
	writer := rbacv1.PolicyRule{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"clustertrustbundles"}, Verbs: []string{"create"}}
	grant(t, c, "alice-writes", "alice", writer)
	grant(t, c, "bob-writes", "bob", writer)
	grant(t, c, "bob-attests", "bob", rbacv1.PolicyRule{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"},
		ResourceNames: []string{"example.com/bar"}, Verbs: []string{"attest"}})
	ctx := t.Context()
	_, err := asUser(admin, "alice").CertificatesV1().ClusterTrustBundles().Create(ctx, signedBundle(t), metav1.CreateOptions{})
	want := `clustertrustbundles.certificates.k8s.io "example.com:bar:b1" is forbidden: user not permitted to attest for signerName "example.com/bar"`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("create without attest: %v, want %s", err, want)
	}
	if _, err := asUser(admin, "bob").CertificatesV1().ClusterTrustBundles().Create(ctx, signedBundle(t), metav1.CreateOptions{}); err != nil {
		t.Errorf("create with attest on the signer: %v", err)
	}
	unsigned := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "plain"},
		Spec: certificatesv1.ClusterTrustBundleSpec{TrustBundle: testCAPEM(t)}}
	if _, err := asUser(admin, "alice").CertificatesV1().ClusterTrustBundles().Create(ctx, unsigned, metav1.CreateOptions{}); err != nil {
		t.Errorf("create of a bundle without signer: %v, want no attest check", err)
	}
}

// stubRequest is a PKCS#10 request for a new Ed25519 key.
func stubRequest(t *testing.T) []byte {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// podCertWorld makes nodes n1 and n2 and service account bot.
func podCertWorld(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ctx := t.Context()
	for _, n := range []string{"n1", "n2"} {
		if _, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "bot"}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// certPod creates pod name of bot on node, projecting a certificate of
// example.com/foo.
func certPod(t *testing.T, c kubernetes.Interface, name, node string) *corev1.Pod {
	t.Helper()
	cert := &corev1.PodCertificateProjection{SignerName: "example.com/foo", KeyType: "ED25519", CredentialBundlePath: "creds.pem"}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PodSpec{NodeName: node,
		ServiceAccountName: "bot", Containers: []corev1.Container{{Name: "c", Image: "i"}},
		Volumes: []corev1.Volume{{Name: "certs", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{PodCertificate: cert}}}}}}}}
	pod, err := c.CoreV1().Pods("default").Create(t.Context(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

// requestFor is node's request of a certificate for pod.
func requestFor(t *testing.T, c kubernetes.Interface, pod *corev1.Pod, node string) *certificatesv1.PodCertificateRequest {
	t.Helper()
	ctx := t.Context()
	n, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sa, err := c.CoreV1().ServiceAccounts("default").Get(ctx, "bot", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Name: "req-" + node, Namespace: "default"},
		Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/foo", PodName: pod.Name, PodUID: pod.UID,
			ServiceAccountName: "bot", ServiceAccountUID: sa.UID, NodeName: "n1", NodeUID: n.UID, StubPKCS10Request: stubRequest(t)}}
}

// A kubelet requests certificates for the pods it runs: for a pod on
// another node NodeRestriction refuses with upstream's message; for its
// own pod the request is created, and the node may read it but not
// another node. A status write that changes the status needs "sign" on
// the signer, refused with upstream's message otherwise.
func TestNodePodCertificateRequests(t *testing.T) {
	_, admin := startNodeRestriction(t)
	ctx := t.Context()
	c := kubernetes.NewForConfigOrDie(admin)
	podCertWorld(t, c)
	pod := certPod(t, c, "p", "n2")
	kubelet := asNode(admin, "n1").CertificatesV1().PodCertificateRequests("default")
	_, err := kubelet.Create(ctx, requestFor(t, c, pod, "n1"), metav1.CreateOptions{})
	want := `podcertificaterequests.certificates.k8s.io "req-n1" is forbidden: pod "default/p" is not running on node "n1" named in the PodCertificateRequest`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("node requesting a certificate for another node's pod: %v, want %s", err, want)
	}
	own := certPod(t, c, "q", "n1")
	req, err := kubelet.Create(ctx, requestFor(t, c, own, "n1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("node requesting a certificate for its pod: %v", err)
	}
	if _, err := kubelet.Get(ctx, req.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("node reading its request: %v", err)
	}
	if _, err := asNode(admin, "n2").CertificatesV1().PodCertificateRequests("default").Get(ctx, req.Name, metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("another node reading the request: %v, want forbidden", err)
	}
	grant(t, c, "carol-status", "carol", rbacv1.PolicyRule{APIGroups: []string{"certificates.k8s.io"},
		Resources: []string{"podcertificaterequests/status"}, Verbs: []string{"update"}})
	req.Status.Conditions = []metav1.Condition{{Type: "Denied", Status: "True", Reason: "Nope", LastTransitionTime: metav1.Now()}}
	_, err = asUser(admin, "carol").CertificatesV1().PodCertificateRequests("default").UpdateStatus(ctx, req, metav1.UpdateOptions{})
	want = `PodCertificateRequest.certificates.k8s.io "req-n1" is invalid: spec.signerName: Forbidden: User "carol" is not permitted to "sign" for signer "example.com/foo"`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("status write without sign: %v, want %s", err, want)
	}
	grant(t, c, "carol-signs", "carol", rbacv1.PolicyRule{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"},
		ResourceNames: []string{"example.com/*"}, Verbs: []string{"sign"}})
	if _, err := asUser(admin, "carol").CertificatesV1().PodCertificateRequests("default").UpdateStatus(ctx, req, metav1.UpdateOptions{}); err != nil {
		t.Errorf("status write with sign on the signer's domain: %v", err)
	}
}
