package server

import (
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// startNodeRestriction is a server with NodeRestriction on (it is off by
// default, as upstream) and its admin client.
func startNodeRestriction(t *testing.T) (*Server, *rest.Config) {
	t.Helper()
	o := testOptions(t)
	o.EnableAdmissionPlugins = []string{"NodeRestriction"}
	return startWith(t, o)
}

func csiNodeOf(name, nodeID string) *storagev1.CSINode {
	return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{
		Name: "disk.csi.example.com", NodeID: nodeID, TopologyKeys: []string{"topology.kubernetes.io/zone"},
		Allocatable: &storagev1.VolumeNodeResources{Count: ptr.To[int32](8)}}}}}
}

// A kubelet registers drivers in its own CSINode (the Node authorizer lets
// it, NodeRestriction agrees) and may change their allocatable count but
// not their node ID. Another node's CSINode it may not write: a create is
// refused by NodeRestriction, a delete by the Node authorizer (with RBAC
// granting nothing), or, where a binding grants it (the system:node role
// bound to every node), by NodeRestriction; each with upstream's message.
func TestNodeWritesOnlyItsCSINode(t *testing.T) {
	_, admin := startNodeRestriction(t)
	ctx := t.Context()
	kubelet := asNode(admin, "n1").StorageV1().CSINodes()
	own, err := kubelet.Create(ctx, csiNodeOf("n1", "i-1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("node creating its CSINode: %v", err)
	}
	own.Spec.Drivers[0].Allocatable.Count = ptr.To[int32](16)
	if own, err = kubelet.Update(ctx, own, metav1.UpdateOptions{}); err != nil {
		t.Errorf("node changing its driver's allocatable count: %v", err)
	}
	own.Spec.Drivers[0].NodeID = "i-2"
	_, err = kubelet.Update(ctx, own, metav1.UpdateOptions{})
	want := `CSINode.storage.k8s.io "n1" is invalid: spec.drivers: Invalid value: {"Name":"disk.csi.example.com","NodeID":"i-2",` +
		`"TopologyKeys":["topology.kubernetes.io/zone"],"Allocatable":null}: field is immutable`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("node changing its driver's node ID: %v, want %s", err, want)
	}

	// The Node authorizer cannot know a created object's name, so it lets
	// every create through and NodeRestriction checks the name.
	_, err = kubelet.Create(ctx, csiNodeOf("n2", "i-3"), metav1.CreateOptions{})
	refused := `csinodes.storage.k8s.io "n2" is forbidden: can only access CSINode with the same name as the requesting node`
	if !apierrors.IsForbidden(err) || err.Error() != refused {
		t.Errorf("node creating another node's CSINode: %v, want %s", err, refused)
	}
	c := kubernetes.NewForConfigOrDie(admin)
	if _, err := c.StorageV1().CSINodes().Create(ctx, csiNodeOf("n2", "i-3"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = kubelet.Delete(ctx, "n2", metav1.DeleteOptions{})
	want = `csinodes.storage.k8s.io "n2" is forbidden: User "system:node:n1" cannot delete resource "csinodes" in API group "storage.k8s.io" ` +
		`at the cluster scope: node: can only access CSINode with the same name as the requesting node`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("node deleting another node's CSINode: %v, want %s", err, want)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "every-node"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:nodes"}}}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = kubelet.Delete(ctx, "n2", metav1.DeleteOptions{})
	if !apierrors.IsForbidden(err) || err.Error() != refused {
		t.Errorf("node deleting another node's CSINode with RBAC's leave: %v, want %s", err, refused)
	}
}

// A kubelet may request a token for an audience of a pod it runs when a
// CSI driver the pod mounts requests tokens for that audience:
// NodeRestriction reads the CSIDriver, which before it exists is an error.
func TestNodeTokenForACSIDriversAudience(t *testing.T) {
	_, admin := startNodeRestriction(t)
	ctx := t.Context()
	c := kubernetes.NewForConfigOrDie(admin)
	if _, err := c.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "bot"}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: corev1.PodSpec{NodeName: "n1",
		ServiceAccountName: "bot", Containers: []corev1.Container{{Name: "c", Image: "i"}},
		Volumes: []corev1.Volume{{Name: "secrets", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "vault.csi.example.com"}}}}}}
	pod, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	request := func() error {
		tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"vault"},
			BoundObjectRef: &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "p", UID: pod.UID}}}
		_, err := asNode(admin, "n1").CoreV1().ServiceAccounts("default").CreateToken(ctx, "bot", tr, metav1.CreateOptions{})
		return err
	}
	err = request()
	want := `serviceaccounts "bot" is forbidden: error validating audience "vault": csidriver.storage.k8s.io "vault.csi.example.com" not found`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("token for the audience before the CSIDriver exists: %v, want %s", err, want)
	}
	driver := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "vault.csi.example.com"},
		Spec: storagev1.CSIDriverSpec{TokenRequests: []storagev1.TokenRequest{{Audience: "vault"}}, ServiceAccountTokenInSecrets: ptr.To(true)}}
	if _, err := c.StorageV1().CSIDrivers().Create(ctx, driver, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := request(); err != nil {
		t.Errorf("token for the audience the pod's CSI driver requests: %v", err)
	}
}
