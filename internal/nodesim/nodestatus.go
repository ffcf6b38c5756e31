package nodesim

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubeletVersion is the version a simulated kubelet reports.
const kubeletVersion = "v1.37.2"

// Addresses a simulated node is given from its index: node i has InternalIP
// 192.0.2.1+i (TEST-NET-1, as kwokctl's nodes) and pod CIDR 10.244.i.0/24
// (kind's), both continuing into the next block past 255.
var (
	nodeIPBase  = netip.MustParseAddr("192.0.2.1")
	podCIDRBase = netip.MustParseAddr("10.244.0.0")
)

// defaultCapacity is what a simulated node offers unless its Node already
// states a capacity (kwokctl's default node).
func defaultCapacity() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("32"),
		corev1.ResourceMemory:           resource.MustParse("256Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
		"hugepages-1Gi":                 resource.MustParse("0"),
		"hugepages-2Mi":                 resource.MustParse("0"),
	}
}

// addIP is base plus n, carrying into the higher bytes.
func addIP(base netip.Addr, n uint32) netip.Addr {
	b := base.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += n
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// nodeIP is the InternalIP of the node with index i.
func nodeIP(i int) string { return addIP(nodeIPBase, uint32(i)).String() }

// podCIDR is the pod range of the node with index i.
func podCIDR(i int) string { return addIP(podCIDRBase, uint32(i)<<8).String() + "/24" }

// registration is the Node a simulated kubelet registers for itself: the
// labels a kubelet sets (hostname, os, arch and their beta twins), the
// attach-detach annotation, the simulated-node annotation and a pod CIDR.
func registration(name string, index int) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
				corev1.LabelArchStable: "amd64", corev1.LabelHostname: name, corev1.LabelOSStable: "linux",
			},
			Annotations: map[string]string{
				"volumes.kubernetes.io/controller-managed-attach-detach": "true",
				AnnotationNode: AnnotationNodeValue,
			},
		},
		Spec: corev1.NodeSpec{PodCIDR: podCIDR(index), PodCIDRs: []string{podCIDR(index)}},
	}
}

// nodeStatus is the status a kubelet posts for node: capacity and
// allocatable (the node's own if it states them), the pressure conditions
// False and Ready True with the kubelet's reasons and messages (a
// condition keeps its lastTransitionTime while its status stays),
// addresses, the kubelet endpoint, and node info.
func nodeStatus(node *corev1.Node, index int, now metav1.Time) corev1.NodeStatus {
	capacity := node.Status.Capacity
	if len(capacity) == 0 {
		capacity = defaultCapacity()
	}
	allocatable := node.Status.Allocatable
	if len(allocatable) == 0 {
		allocatable = capacity
	}
	s := corev1.NodeStatus{
		Capacity: capacity, Allocatable: allocatable,
		Addresses:       node.Status.Addresses,
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
		NodeInfo: corev1.NodeSystemInfo{
			MachineID: digest("machine/" + node.Name)[:32], SystemUUID: uuid(digest("system/" + node.Name)),
			BootID: uuid(digest("boot/" + node.Name)), KernelVersion: "6.8.0-simulated", OSImage: "admitd simulated node",
			ContainerRuntimeVersion: "containerd://2.1.0", KubeletVersion: kubeletVersion,
			OperatingSystem: "linux", Architecture: "amd64",
		},
		Images:          node.Status.Images,
		RuntimeHandlers: runtimeHandlers(),
		Features:        &corev1.NodeFeatures{SupplementalGroupsPolicy: ptrTo(true)},
	}
	if len(s.Addresses) == 0 {
		s.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: nodeIP(index)}, {Type: corev1.NodeHostName, Address: node.Name}}
	}
	for _, c := range []corev1.NodeCondition{
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available"},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure"},
		{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available"},
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"},
	} {
		c.LastHeartbeatTime, c.LastTransitionTime = now, now
		for _, old := range node.Status.Conditions {
			if old.Type == c.Type && old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
		}
		s.Conditions = append(s.Conditions, c)
	}
	return s
}

// runtimeHandlers are containerd's default and runc handlers, as a kubelet
// on containerd 2 reports them.
func runtimeHandlers() []corev1.NodeRuntimeHandler {
	features := func() *corev1.NodeRuntimeHandlerFeatures {
		return &corev1.NodeRuntimeHandlerFeatures{RecursiveReadOnlyMounts: ptrTo(true), UserNamespaces: ptrTo(true)}
	}
	return []corev1.NodeRuntimeHandler{{Name: "", Features: features()}, {Name: "runc", Features: features()}}
}

// uuid formats the first 32 hex digits of h as a UUID.
func uuid(h string) string {
	return fmt.Sprintf("%s-%s-%s-%s-%s", h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])
}

// nodeReady reports whether node's Ready condition is True.
func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Simulated reports whether node is marked as simulated.
func Simulated(node *corev1.Node) bool {
	return node.Annotations[AnnotationNode] == AnnotationNodeValue
}
