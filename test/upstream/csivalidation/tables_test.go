package csivalidation

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// The inputs of upstream's own validation tests
// (pkg/apis/storage/validation/validation_test.go: TestCSINodeValidation,
// TestCSINodeUpdateValidation, TestCSIDriverValidation,
// TestCSIDriverValidationUpdate, TestValidateCSIStorageCapacity,
// TestCSIServiceAccountToken, TestValidateCSINodeStatusUpdate), as v1
// objects: each is one base object and the edits upstream's cases make to
// it. Creates also run with decoding defaults, as a client's write would.

const (
	nodeID      = "nodeA"
	driverName  = "test-driver"
	longName    = "my-a-b-c-d-c-f-g-h-i-j-k-l-m-n-o-p-q-r-s-t-u-v-w-x-y-z-ABCDEFGHIJKLMNOPQRSTUVWXYZ-driver"
	invalidName = "-invalid-@#$%^&*()-"
)

var zones = []string{"company.com/zone1", "company.com/zone2"}

func node(name string, drivers ...storagev1.CSINodeDriver) *storagev1.CSINode {
	return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}, Spec: storagev1.CSINodeSpec{Drivers: drivers}}
}

func driver(name, id string, keys []string, count *int32) storagev1.CSINodeDriver {
	d := storagev1.CSINodeDriver{Name: name, NodeID: id, TopologyKeys: keys}
	if count != nil {
		d.Allocatable = &storagev1.VolumeNodeResources{Count: count}
	}
	return d
}

// upstreamNodes are TestCSINodeValidation's nodes, valid and not.
func upstreamNodes() []runtime.Object {
	var out []runtime.Object
	for _, name := range []string{"io.kubernetes.storage.csi.driver", "io-kubernetes-storage-csi-driver", "1io-kubernetes-storage-2-csi-driver3",
		"io.kubernetes.storage-csi-driver", "1io.kubernetes-storage-2-csi-driver3", "a", "", "_io.kubernetes.storage.csi.driver",
		"io.kubernetes.storage.csi.driver/", "io/kubernetes/storage/csi~driver", "io_kubernetes_storage_csi_driver", strings.Repeat("a", 88)} {
		out = append(out, node("foo1", driver(name, nodeID, zones, nil)))
	}
	out = append(out,
		node("foo6", driver("driver1", "node1", []string{"key1", "key2"}, nil), driver("driverB", "nodeA", []string{"keyA", "keyB"}, nil)),
		node("foo7", driver("driver1", "node1", []string{"key1"}, nil), driver("driver2", "node1", []string{"key1"}, nil)),
		node("foo11", driver("io.kubernetes.storage.csi.driver", nodeID, zones, ptr.To[int32](0))),
		node("foo11", driver("io.kubernetes.storage.csi.driver", nodeID, zones, ptr.To[int32](1))),
		node("foo11", driver("io.kubernetes.storage.csi.driver", nodeID, zones, ptr.To[int32](-1))),
		node("foo8", driver("driver1", "node1", []string{"zone_1", "zone.2"}, nil), driver("driver2", "node1", []string{"zone-3", "zone.4"}, nil)),
		node("foo9", driver("driver1", "node1", []string{"company-com/zone1", "company.com/zone2"}, nil)),
		node("foo10", driver("driver-name", nodeID, nil, nil)),
		node("foo9", driver("driver-name", nodeID, []string{"company.com/zone1", ""}, nil)),
		node("foo10", driver("driver1", "node1", []string{"key1", "key2"}, nil), driver("driver1", "nodeX", []string{"keyA", "keyB"}, nil)),
		node("foo11", driver("driver1", "node1", []string{"key1", "key1"}, nil)),
		node("foo12", driver("driver1", "node1", []string{"key1"}, nil), driver("driver2", "nodeX", []string{"keyA", "keyA"}, nil)),
		node("foo13", driver("driver-name", "", zones, nil)),
		node("foo14", driver("driver-name", "node1", []string{"Company.Com/zone1", "company.com/zone2"}, nil)),
		node("foo15", driver("driver-name", strings.Repeat("a", 257), zones, nil)),
	)
	return out
}

// upstreamNodeUpdates are TestCSINodeUpdateValidation's updates of its old
// node, and TestValidateCSINodeStatusUpdate's status writes.
func upstreamNodeUpdates() (updates, statuses []runtime.Object, old *storagev1.CSINode) {
	d1 := func(id string, count *int32) storagev1.CSINodeDriver {
		return driver("io.kubernetes.storage.csi.driver-1", id, zones, count)
	}
	d2 := func(keys []string, count *int32) storagev1.CSINodeDriver {
		return driver("io.kubernetes.storage.csi.driver-2", nodeID, keys, count)
	}
	old = node("foo1", d1(nodeID, nil), d2(zones, ptr.To[int32](20)))
	updates = []runtime.Object{
		node("foo1", d1(nodeID, nil), d2(zones, ptr.To[int32](20))),
		node("foo1", d1(nodeID, nil)),
		node("foo1", d1(nodeID, nil), d2(zones, ptr.To[int32](20)), driver("io.kubernetes.storage.csi.driver-3", nodeID, zones, ptr.To[int32](30))),
		node("foo1", d1(nodeID, nil), driver("io.kubernetes.storage.csi.new-driver", nodeID, zones, ptr.To[int32](30))),
		node("foo1", d1("nodeB", nil), d2(zones, ptr.To[int32](20))),
		node("foo1", d1(nodeID, nil), d2([]string{"company.com/zone2"}, ptr.To[int32](20))),
		node("foo1", d1(nodeID, ptr.To[int32](10)), d2(zones, ptr.To[int32](20))),
		node("foo1", d1(nodeID, nil), d2(zones, ptr.To[int32](21))),
		node("foo1", d1(nodeID, nil), storagev1.CSINodeDriver{Name: "io.kubernetes.storage.csi.driver-2", NodeID: nodeID, TopologyKeys: zones,
			Allocatable: &storagev1.VolumeNodeResources{}}),
		node("foo1", d1(nodeID, nil), d2(zones, nil)),
	}
	withHealth := func(h ...storagev1.StorageHealth) runtime.Object {
		n := node("foo1", d1(nodeID, nil), d2(zones, ptr.To[int32](20)))
		n.ResourceVersion = "2"
		n.Status.StorageHealth = h
		return n
	}
	cond := func(status storagev1.StorageHealthStatusType, reason string) storagev1.StorageHealthCondition {
		return storagev1.StorageHealthCondition{Status: status, Reason: reason}
	}
	health := func(name string, c ...storagev1.StorageHealthCondition) storagev1.StorageHealth {
		return storagev1.StorageHealth{Name: name, HealthConditions: c}
	}
	down := cond(storagev1.StorageUnreachable, "BackendDown")
	badAccess, badMode := down, down
	badAccess.AccessMode = ptr.To(corev1.PersistentVolumeAccessMode("invalid"))
	badMode.VolumeMode = ptr.To(corev1.PersistentVolumeMode("invalid"))
	statuses = []runtime.Object{
		withHealth(health("driver1", down)),
		withHealth(health("driver1", cond(storagev1.StorageDegraded, "HighLatency"))),
		withHealth(),
		withHealth(health("driver1", cond("InvalidType", "SomeReason"))),
		withHealth(health("", down)),
		withHealth(health("driver1", cond(storagev1.StorageUnreachable, ""))),
		withHealth(health("driver1", cond(storagev1.StorageUnreachable, "invalid;val"))),
		withHealth(health("driver1"), health("driver1")),
		withHealth(health("driver1", down, down)),
		withHealth(health("driver1", cond(storagev1.StorageUnreachable, strings.Repeat("a", 257)))),
		withHealth(health("driver1", make([]storagev1.StorageHealthCondition, 17)...)),
		withHealth(health("driver1", badAccess)),
		withHealth(health("driver1", badMode)),
	}
	return updates, statuses, old
}

// csiDriver is TestCSIDriverValidation's base: every required field set.
func csiDriver(name string, edit func(s *storagev1.CSIDriverSpec)) *storagev1.CSIDriver {
	d := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}, Spec: storagev1.CSIDriverSpec{
		AttachRequired: ptr.To(true), PodInfoOnMount: ptr.To(true), RequiresRepublish: ptr.To(false), StorageCapacity: ptr.To(true),
		SELinuxMount: ptr.To(true), PreventPodSchedulingIfMissing: ptr.To(false)}}
	if edit != nil {
		edit(&d.Spec)
	}
	return d
}

func modes(m ...storagev1.VolumeLifecycleMode) []storagev1.VolumeLifecycleMode { return m }

// driverEdits are the single changes upstream's CSIDriver cases make.
var driverEdits = map[string]func(s *storagev1.CSIDriverSpec){
	"no change":           func(*storagev1.CSIDriverSpec) {},
	"attach not required": func(s *storagev1.CSIDriverSpec) { s.AttachRequired = ptr.To(false) },
	"attach unset":        func(s *storagev1.CSIDriverSpec) { s.AttachRequired = nil },
	"no pod info":         func(s *storagev1.CSIDriverSpec) { s.PodInfoOnMount = ptr.To(false) },
	"pod info unset":      func(s *storagev1.CSIDriverSpec) { s.PodInfoOnMount = nil },
	"no capacity":         func(s *storagev1.CSIDriverSpec) { s.StorageCapacity = ptr.To(false) },
	"capacity unset":      func(s *storagev1.CSIDriverSpec) { s.StorageCapacity = nil },
	"republish":           func(s *storagev1.CSIDriverSpec) { s.RequiresRepublish = ptr.To(true) },
	"persistent":          func(s *storagev1.CSIDriverSpec) { s.VolumeLifecycleModes = modes(storagev1.VolumeLifecyclePersistent) },
	"ephemeral":           func(s *storagev1.CSIDriverSpec) { s.VolumeLifecycleModes = modes(storagev1.VolumeLifecycleEphemeral) },
	"both modes":          func(s *storagev1.CSIDriverSpec) { s.VolumeLifecycleModes = modes("Ephemeral", "Persistent") },
	"repeated mode": func(s *storagev1.CSIDriverSpec) {
		s.VolumeLifecycleModes = modes("Ephemeral", "Persistent", "Ephemeral")
	},
	"no such mode":          func(s *storagev1.CSIDriverSpec) { s.VolumeLifecycleModes = modes("no-such-mode") },
	"modes unset":           func(s *storagev1.CSIDriverSpec) { s.VolumeLifecycleModes = nil },
	"file fsGroup":          func(s *storagev1.CSIDriverSpec) { s.FSGroupPolicy = ptr.To(storagev1.FileFSGroupPolicy) },
	"bad fsGroup":           func(s *storagev1.CSIDriverSpec) { s.FSGroupPolicy = ptr.To[storagev1.FSGroupPolicy]("invalid-mode") },
	"no SELinux mount":      func(s *storagev1.CSIDriverSpec) { s.SELinuxMount = ptr.To(false) },
	"SELinux mount unset":   func(s *storagev1.CSIDriverSpec) { s.SELinuxMount = nil },
	"scheduling rule unset": func(s *storagev1.CSIDriverSpec) { s.PreventPodSchedulingIfMissing = nil },
	"update period 10":      func(s *storagev1.CSIDriverSpec) { s.NodeAllocatableUpdatePeriodSeconds = ptr.To[int64](10) },
	"update period 9":       func(s *storagev1.CSIDriverSpec) { s.NodeAllocatableUpdatePeriodSeconds = ptr.To[int64](9) },
	"gcp token":             func(s *storagev1.CSIDriverSpec) { s.TokenRequests = []storagev1.TokenRequest{{Audience: "gcp"}} },
	"gcp tokens twice": func(s *storagev1.CSIDriverSpec) {
		s.TokenRequests = []storagev1.TokenRequest{{Audience: "gcp"}, {Audience: "gcp"}}
	},
	"short token":    func(s *storagev1.CSIDriverSpec) { s.TokenRequests = tokens(ptr.To[int64](10)) },
	"long token":     func(s *storagev1.CSIDriverSpec) { s.TokenRequests = tokens(ptr.To[int64](1<<32 + 1)) },
	"empty audience": func(s *storagev1.CSIDriverSpec) { s.TokenRequests = []storagev1.TokenRequest{{}} },
	"three audiences": func(s *storagev1.CSIDriverSpec) {
		s.TokenRequests = []storagev1.TokenRequest{{}, {Audience: "gcp"}, {Audience: "aws"}}
	},
	"tokens in secrets": func(s *storagev1.CSIDriverSpec) {
		s.ServiceAccountTokenInSecrets = ptr.To(true)
		s.TokenRequests = tokens(nil)
	},
	"tokens not in secrets": func(s *storagev1.CSIDriverSpec) {
		s.ServiceAccountTokenInSecrets = ptr.To(false)
		s.TokenRequests = tokens(nil)
	},
	"secrets without tokens":     func(s *storagev1.CSIDriverSpec) { s.ServiceAccountTokenInSecrets = ptr.To(true) },
	"only SA token (unset rest)": func(s *storagev1.CSIDriverSpec) { *s = storagev1.CSIDriverSpec{TokenRequests: tokens(nil)} },
}

func tokens(expiration *int64) []storagev1.TokenRequest {
	return []storagev1.TokenRequest{{Audience: "test-audience", ExpirationSeconds: expiration}}
}

// upstreamDriverOld is TestCSIDriverValidationUpdate's stored driver.
func upstreamDriverOld() *storagev1.CSIDriver {
	return csiDriver(driverName, func(s *storagev1.CSIDriverSpec) {
		s.AttachRequired, s.PodInfoOnMount = ptr.To(false), ptr.To(false)
		s.VolumeLifecycleModes = modes(storagev1.VolumeLifecycleEphemeral, storagev1.VolumeLifecyclePersistent)
	})
}

// upstreamCapacities are TestValidateCSIStorageCapacity's capacities.
func upstreamCapacities() map[string]*storagev1.CSIStorageCapacity {
	good := func(edit func(c *storagev1.CSIStorageCapacity)) *storagev1.CSIStorageCapacity {
		c := &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Name: "csc-329803da-fdd2-42e4-af6f-7b07e7ccc305",
			Namespace: metav1.NamespaceDefault, ResourceVersion: "1"}, StorageClassName: "test-sc"}
		edit(c)
		return c
	}
	return map[string]*storagev1.CSIStorageCapacity{
		"good-capacity":              good(func(*storagev1.CSIStorageCapacity) {}),
		"missing-storage-class-name": good(func(c *storagev1.CSIStorageCapacity) { c.StorageClassName = "" }),
		"bad-storage-class-name":     good(func(c *storagev1.CSIStorageCapacity) { c.StorageClassName = invalidName }),
		"good-capacity-value":        good(func(c *storagev1.CSIStorageCapacity) { c.Capacity = resource.NewQuantity(1, resource.BinarySI) }),
		"bad-capacity-value":         good(func(c *storagev1.CSIStorageCapacity) { c.Capacity = resource.NewQuantity(-11, resource.BinarySI) }),
		"good-topology": good(func(c *storagev1.CSIStorageCapacity) {
			c.NodeTopology = &metav1.LabelSelector{MatchLabels: map[string]string{"foo": "bar"}}
		}),
		"empty-topology": good(func(c *storagev1.CSIStorageCapacity) { c.NodeTopology = &metav1.LabelSelector{} }),
		"bad-topology-fields": good(func(c *storagev1.CSIStorageCapacity) {
			c.NodeTopology = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "foo", Operator: "no-such-operator",
				Values: []string{"bar"}}}}
		}),
	}
}

func TestUpstreamTables(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	both := func(name string, obj runtime.Object) {
		for _, defaulted := range []bool{false, true} {
			compare(t, cat, write{Name: fmt.Sprintf("%s (defaulted %v)", name, defaulted), Obj: obj, Defaulted: defaulted}, &c)
		}
	}
	for i, n := range upstreamNodes() {
		both(fmt.Sprintf("node #%d", i), n)
	}
	updates, statuses, oldNode := upstreamNodeUpdates()
	for i, n := range updates {
		compare(t, cat, write{Name: fmt.Sprintf("node update #%d", i), Obj: n, Old: oldNode, Defaulted: true}, &c)
	}
	healthy := oldNode.DeepCopy()
	healthy.Status.StorageHealth = []storagev1.StorageHealth{{Name: "driver1"}}
	for i, n := range statuses {
		for _, old := range []*storagev1.CSINode{oldNode, healthy} {
			compare(t, cat, write{Name: fmt.Sprintf("node status #%d", i), Obj: n, Old: old, Status: true, Defaulted: true}, &c)
		}
	}
	oldDriver := upstreamDriverOld()
	for name, edit := range driverEdits {
		for _, driverName := range []string{driverName, "io.kubernetes.storage.csi.driver", "1csi2driver3", longName, invalidName} {
			both(name+" "+driverName, csiDriver(driverName, edit))
		}
		changed := oldDriver.DeepCopy()
		edit(&changed.Spec)
		compare(t, cat, write{Name: "update " + name, Obj: changed, Old: oldDriver, Defaulted: true}, &c)
	}
	for name, capacity := range upstreamCapacities() {
		both(name, capacity)
		stored := upstreamCapacities()["good-topology"]
		compare(t, cat, write{Name: "update to " + name, Obj: capacity, Old: stored, Defaulted: true}, &c)
	}
	t.Log(c.String())
}
