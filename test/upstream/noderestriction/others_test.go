package noderestriction

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

// pvcStatusWrites change each part of a claim through its status.
func pvcStatusWrites() []named {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	old := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: ns, ResourceVersion: "1"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeName: "v",
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}
	changes := map[string]func(*corev1.PersistentVolumeClaim){
		"nothing":         func(*corev1.PersistentVolumeClaim) {},
		"resourceVersion": func(c *corev1.PersistentVolumeClaim) { c.ResourceVersion = "" },
		"capacity": func(c *corev1.PersistentVolumeClaim) {
			c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}
		},
		"conditions": func(c *corev1.PersistentVolumeClaim) {
			c.Status.Conditions = []corev1.PersistentVolumeClaimCondition{{Type: "Resizing"}}
		},
		"allocated": func(c *corev1.PersistentVolumeClaim) {
			c.Status.AllocatedResources = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}
		},
		"allocated statuses": func(c *corev1.PersistentVolumeClaim) {
			c.Status.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{"storage": "ControllerResizeInProgress"}
		},
		"managedFields": func(c *corev1.PersistentVolumeClaim) { c.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m"}} },
		"phase":         func(c *corev1.PersistentVolumeClaim) { c.Status.Phase = corev1.ClaimLost },
		"labels":        func(c *corev1.PersistentVolumeClaim) { c.Labels = map[string]string{"a": "b"} },
		"finalizers":    func(c *corev1.PersistentVolumeClaim) { c.Finalizers = []string{"f"} },
		"spec request": func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("3Gi")
		},
		"data source": func(c *corev1.PersistentVolumeClaim) {
			c.Spec.DataSource = &corev1.TypedLocalObjectReference{Kind: "K", Name: "n"}
		},
		"data source ref": func(c *corev1.PersistentVolumeClaim) {
			c.Spec.DataSourceRef = &corev1.TypedObjectReference{APIGroup: ptr.To("g"), Kind: "K", Name: "n", Namespace: ptr.To("o")}
		},
		"modify status": func(c *corev1.PersistentVolumeClaim) {
			c.Status.ModifyVolumeStatus = &corev1.ModifyVolumeStatus{Status: "Pending"}
		},
		"access modes": func(c *corev1.PersistentVolumeClaim) {
			c.Status.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
		},
		"current class": func(c *corev1.PersistentVolumeClaim) { c.Status.CurrentVolumeAttributesClassName = ptr.To("gold") },
		"selector": func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}
		},
		"volume mode":    func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock) },
		"storage class":  func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To("") },
		"empty modes":    func(c *corev1.PersistentVolumeClaim) { c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{} },
		"annotations":    func(c *corev1.PersistentVolumeClaim) { c.Annotations = map[string]string{"a": "b"} },
		"volume name":    func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "w" },
		"class name":     func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeAttributesClassName = ptr.To("gold") },
		"deletion grace": func(c *corev1.PersistentVolumeClaim) { c.DeletionGracePeriodSeconds = ptr.To[int64](3) },
	}
	var out []named
	for cn, change := range changes {
		c := old.DeepCopy()
		change(c)
		out = append(out, named{"update PVC status: " + cn, admissiontest.Update(c, old).Resource(gvr, "status")})
	}
	return append(out,
		named{"create PVC status", admissiontest.Create(old).Resource(gvr, "status")},
		named{"update PVC", admissiontest.Update(old, old)},
		named{"create PVC", admissiontest.Create(old)},
		named{"delete PVC", admissiontest.Delete(old)},
	)
}

// tokenRequests: bindings and audiences of every kind.
func tokenRequests() []named {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	tr := func(ref *authenticationv1.BoundObjectReference, audiences ...string) *authenticationv1.TokenRequest {
		return &authenticationv1.TokenRequest{ObjectMeta: metav1.ObjectMeta{Name: "sa1", Namespace: ns},
			Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: ref, Audiences: audiences}}
	}
	pod := func(name, uid string) *authenticationv1.BoundObjectReference {
		return &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: name, UID: types.UID(uid)}
	}
	refs := map[string]*authenticationv1.BoundObjectReference{
		"none":       nil,
		"secret":     {APIVersion: "v1", Kind: "Secret", Name: "s", UID: "u"},
		"v2 pod":     {APIVersion: "v2", Kind: "Pod", Name: "p1", UID: "p1-uid"},
		"no name":    pod("", "p1-uid"),
		"no uid":     pod("p1", ""),
		"wrong uid":  pod("p1", "x"),
		"other node": pod("p2", "p2-uid"),
		"unbound":    pod("p-unbound", "p-unbound-uid"),
		"missing":    pod("gone", "gone-uid"),
		"p1":         pod("p1", "p1-uid"),
	}
	var out []named
	for rn, ref := range refs {
		out = append(out, named{"token bound to " + rn, admissiontest.Create(tr(ref)).Resource(gvr, "token")})
	}
	for _, aud := range []string{"", "projected", "csi-a", "csi-b", "ebs", "gce", "azure", "cinder", "azurefile", "allowed", "error", "denied"} {
		out = append(out, named{"token for p1 audience " + aud, admissiontest.Create(tr(pod("p1", "p1-uid"), aud)).Resource(gvr, "token")})
		out = append(out, named{"token for p-broken audience " + aud, admissiontest.Create(tr(pod("p-broken", "p-broken-uid"), aud)).Resource(gvr, "token")})
	}
	return append(out,
		named{"token for p1 without audience", admissiontest.Create(tr(pod("p1", "p1-uid"))).Resource(gvr, "token")},
		named{"token for p-broken without audience", admissiontest.Create(tr(pod("p-broken", "p-broken-uid"))).Resource(gvr, "token")},
		named{"token with two audiences", admissiontest.Create(tr(pod("p1", "p1-uid"), "projected", "csi-a")).Resource(gvr, "token")},
		named{"update token", admissiontest.Update(tr(nil), tr(nil)).Resource(gvr, "token")},
		named{"create service account", admissiontest.Create(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa", Namespace: ns}})},
	)
}

// leaseAndCSINodeWrites: own and other names, namespaces and operations.
func leaseAndCSINodeWrites() []named {
	csinodes := schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "csinodes"}
	var out []named
	for _, name := range []string{"n1", "n2"} {
		for _, nsName := range []string{"kube-node-lease", "default"} {
			l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: nsName}}
			out = append(out,
				named{"create lease " + nsName + "/" + name, admissiontest.Create(l)},
				named{"update lease " + nsName + "/" + name, admissiontest.Update(l, l)},
				named{"delete lease " + nsName + "/" + name, admissiontest.Delete(l)},
			)
		}
		c := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name}}
		changed := c.DeepCopy()
		changed.Spec.Drivers = []storagev1.CSINodeDriver{{Name: "d", NodeID: "i"}}
		out = append(out,
			named{"create csinode " + name, admissiontest.Create(c).Resource(csinodes, "")},
			named{"update csinode " + name, admissiontest.Update(changed, c).Resource(csinodes, "")},
			named{"delete csinode " + name, admissiontest.Delete(c).Resource(csinodes, "")},
			named{"update csinode status " + name, admissiontest.Update(c, c).Resource(csinodes, "status")},
		)
	}
	return out
}

// sliceWrites: slices of this node, another, and none.
func sliceWrites() []named {
	gvr := schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceslices"}
	var out []named
	for label, node := range map[string]*string{"n1": ptr.To("n1"), "n2": ptr.To("n2"), "nil": nil, "empty": ptr.To("")} {
		s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: resourcev1.ResourceSliceSpec{NodeName: node, Driver: "d"}}
		out = append(out,
			named{"create slice of " + label, admissiontest.Create(s).Resource(gvr, "")},
			named{"update slice of " + label, admissiontest.Update(s, s).Resource(gvr, "")},
			named{"delete slice of " + label, admissiontest.Delete(s).Resource(gvr, "")},
		)
	}
	return out
}

func csrPEM(t testing.TB, cn string) []byte {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// csrWrites: node CSRs of each signer and subject.
func csrWrites(t testing.TB) []named {
	requests := map[string][]byte{
		"n1": csrPEM(t, "system:node:n1"), "n2": csrPEM(t, "system:node:n2"), "other": csrPEM(t, "alice"),
		"not pem": []byte("junk"), "wrong block": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("x")}),
		"bad der": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: []byte("x")}),
	}
	var out []named
	for _, signer := range []string{certificatesv1.KubeletServingSignerName, certificatesv1.KubeAPIServerClientKubeletSignerName, certificatesv1.KubeAPIServerClientSignerName, "example.com/s"} {
		for rn, req := range requests {
			c := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "csr"},
				Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: signer, Request: req}}
			out = append(out, named{"create CSR for " + signer + " of " + rn, admissiontest.Create(c)})
			if rn == "n2" {
				out = append(out, named{"update CSR for " + signer, admissiontest.Update(c, c)})
			}
		}
	}
	return out
}

// pcrWrites: PodCertificateRequests with each part mismatched.
func pcrWrites() []named {
	gvr := schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "podcertificaterequests"}
	good := certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/projected", PodName: "p-pcr", PodUID: "p-pcr-uid",
		ServiceAccountName: "sa1", ServiceAccountUID: "sa1-uid", NodeName: "n1", NodeUID: "n1-uid"}
	changes := map[string]func(*certificatesv1.PodCertificateRequestSpec){
		"good":          func(*certificatesv1.PodCertificateRequestSpec) {},
		"other node":    func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeName = "n2"; s.NodeUID = "n2-uid" },
		"node uid":      func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeUID = "x" },
		"missing pod":   func(s *certificatesv1.PodCertificateRequestSpec) { s.PodName = "gone" },
		"pod uid":       func(s *certificatesv1.PodCertificateRequestSpec) { s.PodUID = "x" },
		"pod elsewhere": func(s *certificatesv1.PodCertificateRequestSpec) { s.PodName, s.PodUID = "p2", "p2-uid" },
		"mirror pod":    func(s *certificatesv1.PodCertificateRequestSpec) { s.PodName, s.PodUID = "p-mirror", "p-mirror-uid" },
		"sa name":       func(s *certificatesv1.PodCertificateRequestSpec) { s.ServiceAccountName = "other" },
		"missing sa": func(s *certificatesv1.PodCertificateRequestSpec) {
			s.PodName, s.PodUID, s.ServiceAccountName = "p-nosa", "p-nosa-uid", "missing-sa"
		},
		"sa uid":         func(s *certificatesv1.PodCertificateRequestSpec) { s.ServiceAccountUID = "x" },
		"signer allowed": func(s *certificatesv1.PodCertificateRequestSpec) { s.SignerName = "example.com/allowed" },
		"signer error":   func(s *certificatesv1.PodCertificateRequestSpec) { s.SignerName = "example.com/error" },
		"signer denied":  func(s *certificatesv1.PodCertificateRequestSpec) { s.SignerName = "example.com/denied" },
	}
	var out []named
	for cn, change := range changes {
		spec := good
		change(&spec)
		p := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Name: "pcr", Namespace: ns}, Spec: spec}
		out = append(out, named{"create PCR: " + cn, admissiontest.Create(p).Resource(gvr, "")})
		if cn == "good" {
			out = append(out, named{"update PCR", admissiontest.Update(p, p).Resource(gvr, "")},
				named{"update PCR status", admissiontest.Update(p, p).Resource(gvr, "status")})
		}
	}
	return out
}
