package server

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// The resource.k8s.io kinds through the server: the Node authorizer and
// NodeRestriction on ResourceSlices and ResourceClaims, the checks of claim
// writes that need the cluster, and quota. Every message was recorded from
// kube-apiserver 1.37.2 (NodeRestriction enabled) for the same requests.

func sliceOn(name string, node *string) *resourcev1.ResourceSlice {
	s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourcev1.ResourceSliceSpec{Driver: "gpu.example.com",
		Pool: resourcev1.ResourcePool{Name: "p", ResourceSliceCount: 1}, Devices: []resourcev1.Device{{Name: "gpu-0"}}}}
	if node != nil {
		s.Spec.NodeName = node
	} else {
		s.Spec.AllNodes = ptr.To(true)
	}
	return s
}

func wantError(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || err.Error() != want {
		t.Errorf("%s: %v\nwant %s", what, err, want)
	}
}

// A kubelet publishes ResourceSlices of its own node only (NodeRestriction
// refuses another node's and one for all nodes), and reads, lists (by its
// node name) and deletes only those (the Node authorizer).
func TestNodeResourceSlices(t *testing.T) {
	_, admin := startNodeRestriction(t)
	ctx := t.Context()
	kubelet := asNode(admin, "n1").ResourceV1().ResourceSlices()
	if _, err := kubelet.Create(ctx, sliceOn("n1-gpu", ptr.To("n1")), metav1.CreateOptions{}); err != nil {
		t.Fatalf("node creating its slice: %v", err)
	}
	refused := `resourceslices.resource.k8s.io "%s" is forbidden: can only create ResourceSlice with the same NodeName as the requesting node`
	_, err := kubelet.Create(ctx, sliceOn("n2-gpu", ptr.To("n2")), metav1.CreateOptions{})
	wantError(t, "node creating another node's slice", err, strings.Replace(refused, "%s", "n2-gpu", 1))
	_, err = kubelet.Create(ctx, sliceOn("all-gpu", nil), metav1.CreateOptions{})
	wantError(t, "node creating a slice for all nodes", err, strings.Replace(refused, "%s", "all-gpu", 1))

	c := kubernetes.NewForConfigOrDie(admin)
	if _, err := c.ResourceV1().ResourceSlices().Create(ctx, sliceOn("n2-gpu", ptr.To("n2")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	noRelation := `resourceslices.resource.k8s.io "n2-gpu" is forbidden: User "system:node:n1" cannot %s resource "resourceslices" ` +
		`in API group "resource.k8s.io" at the cluster scope: node: no relationship found between node 'n1' and this object`
	_, err = kubelet.Get(ctx, "n2-gpu", metav1.GetOptions{})
	wantError(t, "node reading another node's slice", err, strings.Replace(noRelation, "%s", "get", 1))
	err = kubelet.Delete(ctx, "n2-gpu", metav1.DeleteOptions{})
	wantError(t, "node deleting another node's slice", err, strings.Replace(noRelation, "%s", "delete", 1))
	_, err = kubelet.List(ctx, metav1.ListOptions{})
	wantError(t, "node listing every slice", err, `resourceslices.resource.k8s.io is forbidden: User "system:node:n1" cannot list resource "resourceslices" `+
		`in API group "resource.k8s.io" at the cluster scope: node: can only list/watch/deletecollection resourceslices with nodeName field selector`)
	own, err := kubelet.List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"})
	if err != nil || len(own.Items) != 1 || own.Items[0].Name != "n1-gpu" {
		t.Errorf("node listing its slices: %v, %+v; want n1-gpu", err, own)
	}
	slice, err := kubelet.Get(ctx, "n1-gpu", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("node reading its slice: %v", err)
	}
	slice.Spec.NodeName = ptr.To("n2")
	_, err = kubelet.Update(ctx, slice, metav1.UpdateOptions{})
	wantError(t, "node moving its slice", err, `ResourceSlice.resource.k8s.io "n1-gpu" is invalid: spec.nodeName: Invalid value: "n2": field is immutable`)
	if err := kubelet.Delete(ctx, "n1-gpu", metav1.DeleteOptions{}); err != nil {
		t.Errorf("node deleting its slice: %v", err)
	}
}

func claimFor(name, ns, class string, count int64) *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: resourcev1.ResourceClaimSpec{
		Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu",
			Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class, Count: count}}}}}}
}

// A kubelet reads the ResourceClaims of the pods bound to it and no other,
// and may not list claims nor touch their status (a patch of it is refused
// for its verb, as upstream's authorizeGet checks the verb first; not
// recorded: kubectl reads the status before it patches).
func TestNodeReadsItsPodsResourceClaims(t *testing.T) {
	_, admin := startNodeRestriction(t)
	ctx := t.Context()
	c := kubernetes.NewForConfigOrDie(admin)
	for _, name := range []string{"claim-1", "claim-2"} {
		if _, err := c.ResourceV1().ResourceClaims("default").Create(ctx, claimFor(name, "default", "gpu.example.com", 1), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gpu-pod", Namespace: "default"}, Spec: corev1.PodSpec{NodeName: "n1",
		ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("claim-1")}},
		Containers:     []corev1.Container{{Name: "c", Image: "i", Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}}}}}}
	if _, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubelet := asNode(admin, "n1").ResourceV1().ResourceClaims("default")
	eventually(t, "node reading its pod's claim", func() (bool, string) {
		_, err := kubelet.Get(ctx, "claim-1", metav1.GetOptions{})
		return err == nil, errString(err)
	})
	_, err := kubelet.Get(ctx, "claim-2", metav1.GetOptions{})
	wantError(t, "node reading another claim", err, `resourceclaims.resource.k8s.io "claim-2" is forbidden: User "system:node:n1" cannot get resource `+
		`"resourceclaims" in API group "resource.k8s.io" in the namespace "default": node: no relationship found between node 'n1' and this object`)
	_, err = kubelet.List(ctx, metav1.ListOptions{})
	wantError(t, "node listing claims", err, `resourceclaims.resource.k8s.io is forbidden: User "system:node:n1" cannot list resource `+
		`"resourceclaims" in API group "resource.k8s.io" in the namespace "default": node: can only get individual resources of this type`)
	err = asNode(admin, "n1").ResourceV1().RESTClient().Get().Namespace("default").Resource("resourceclaims").Name("claim-1").
		SubResource("status").Do(ctx).Error()
	wantError(t, "node reading a claim's status", err, `resourceclaims.resource.k8s.io "claim-1" is forbidden: User "system:node:n1" cannot get resource `+
		`"resourceclaims/status" in API group "resource.k8s.io" in the namespace "default": node: cannot get subresource`)
	_, err = kubelet.Patch(ctx, "claim-1", types.MergePatchType, []byte(`{"status":{"reservedFor":[{"resource":"pods","name":"gpu-pod","uid":"1"}]}}`),
		metav1.PatchOptions{}, "status")
	wantError(t, "node writing a claim's status", err, `resourceclaims.resource.k8s.io "claim-1" is forbidden: User "system:node:n1" cannot patch resource `+
		`"resourceclaims/status" in API group "resource.k8s.io" in the namespace "default": node: can only get individual resources of this type`)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// The checks of claim writes that need the cluster: admin access needs the
// namespace's label; a status write changing the allocation needs the
// binding permission, one changing device statuses the driver permission.
func TestResourceClaimChecks(t *testing.T) {
	_, admin := startNodeRestriction(t)
	ctx := t.Context()
	c := kubernetes.NewForConfigOrDie(admin)
	claims := c.ResourceV1().ResourceClaims("default")
	adminClaim := claimFor("admin-claim", "default", "gpu.example.com", 1)
	adminClaim.Spec.Devices.Requests[0].Exactly.AdminAccess = ptr.To(true)
	_, err := claims.Create(ctx, adminClaim, metav1.CreateOptions{})
	wantError(t, "admin access in an unlabelled namespace", err, `ResourceClaim.resource.k8s.io "admin-claim" is invalid: spec.devices.requests[0].adminAccess: `+
		"Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace")
	ns, err := c.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.Labels["resource.kubernetes.io/admin-access"] = "true"
	if _, err := c.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := claims.Create(ctx, adminClaim, metav1.CreateOptions{}); err != nil {
		t.Errorf("admin access in a labelled namespace: %v", err)
	}

	if _, err := claims.Create(ctx, claimFor("claim-2", "default", "gpu.example.com", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "claim-status"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{"resource.k8s.io"},
		Resources: []string{"resourceclaims", "resourceclaims/status"}, Verbs: []string{"get", "update", "patch"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "claim-status"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "claim-status"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "bob"}}}
	if _, err := c.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	allocate := []byte(`{"status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.example.com","pool":"n1","device":"gpu-0"}]}}}}`)
	bob := asUser(admin, "bob").ResourceV1().ResourceClaims("default")
	eventually(t, "bob's status permission", func() (bool, string) {
		_, err := bob.Get(ctx, "claim-2", metav1.GetOptions{})
		return err == nil, errString(err)
	})
	_, err = bob.Patch(ctx, "claim-2", types.MergePatchType, allocate, metav1.PatchOptions{}, "status")
	wantError(t, "allocating without the binding permission", err, `ResourceClaim.resource.k8s.io "claim-2" is invalid: status.allocation: Forbidden: `+
		`changing status.allocation or status.reservedFor requires resource="resourceclaims/binding", verb="patch" permission: resourceclaims.resource.k8s.io `+
		`is forbidden: User "bob" cannot patch resource "resourceclaims/binding" in API group "resource.k8s.io" at the cluster scope`)
	if _, err := claims.Patch(ctx, "claim-2", types.MergePatchType, allocate, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("admin allocating: %v", err)
	}
	_, err = bob.Patch(ctx, "claim-2", types.MergePatchType, []byte(`{"status":{"devices":[{"driver":"gpu.example.com","pool":"n1","device":"gpu-0"}]}}`),
		metav1.PatchOptions{}, "status")
	wantError(t, "device status without the driver permission", err, `ResourceClaim.resource.k8s.io "claim-2" is invalid: status.devices: Forbidden: `+
		`changing status.devices requires resource="resourceclaims/driver", verb="[arbitrary-node:patch]" permission: resourceclaims.resource.k8s.io `+
		`"gpu.example.com" is forbidden: User "bob" cannot arbitrary-node:patch resource "resourceclaims/driver" in API group "resource.k8s.io" `+
		`in the namespace "default"`)
}

// A ResourceClaim is counted by a quota (count/resourceclaims.resource.k8s.io)
// and charges the devices of its class (<class>.deviceclass.resource.k8s.io/devices,
// the most an alternative may get), refused with quota's message once they
// are used up.
func TestResourceClaimQuota(t *testing.T) {
	c := startQuota(t, time.Hour)
	ctx := t.Context()
	mustCreateNamespace(t, c, "quota-ns")
	hard := list("count/resourceclaims.resource.k8s.io", "3", "gpu.example.com.deviceclass.resource.k8s.io/devices", "2")
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
	if _, err := c.CoreV1().ResourceQuotas("quota-ns").Create(ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	quotaUsed(t, c, "quota-ns", list("count/resourceclaims.resource.k8s.io", "0", "gpu.example.com.deviceclass.resource.k8s.io/devices", "0"))
	claims := c.ResourceV1().ResourceClaims("quota-ns")
	if _, err := claims.Create(ctx, claimFor("two-gpus", "quota-ns", "gpu.example.com", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := claims.Create(ctx, claimFor("one-more", "quota-ns", "gpu.example.com", 1), metav1.CreateOptions{})
	wantError(t, "a claim over the devices quota", err, `resourceclaims.resource.k8s.io "one-more" is forbidden: exceeded quota: q, `+
		`requested: gpu.example.com.deviceclass.resource.k8s.io/devices=1, used: gpu.example.com.deviceclass.resource.k8s.io/devices=2, `+
		`limited: gpu.example.com.deviceclass.resource.k8s.io/devices=2`)
	if !apierrors.IsForbidden(err) {
		t.Errorf("over quota: %v, want 403", err)
	}
	nics := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "nics"}, Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
		Requests: []resourcev1.DeviceRequest{{Name: "nic", FirstAvailable: []resourcev1.DeviceSubRequest{
			{Name: "a", DeviceClassName: "nic.example.com", Count: 3}, {Name: "b", DeviceClassName: "nic.example.com", AllocationMode: "All"}}}}}}}
	if _, err := claims.Create(ctx, nics, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	quotaUsed(t, c, "quota-ns", list("count/resourceclaims.resource.k8s.io", "2", "gpu.example.com.deviceclass.resource.k8s.io/devices", "2"))
	if err := claims.Delete(ctx, "two-gpus", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	quotaUsed(t, c, "quota-ns", list("count/resourceclaims.resource.k8s.io", "1", "gpu.example.com.deviceclass.resource.k8s.io/devices", "0"))
}
