package printers

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestSmallCoreKinds mirrors upstream's TestPrintNamespace, TestPrintSecret,
// TestPrintConfigMap and TestPrintServiceAccount.
func TestSmallCoreKinds(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: objMeta("team-a"), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	checkKind(t, lookup(t, "", "v1", "namespaces"), []string{"Name", "Status", "Age"}, []cellCase{
		{name: "terminating", obj: ns, cells: []any{"team-a", "Terminating", "5m"}},
	})
	cm := &corev1.ConfigMap{ObjectMeta: objMeta("cfg"), Data: map[string]string{"a": "1"}, BinaryData: map[string][]byte{"b": nil}}
	checkKind(t, lookup(t, "", "v1", "configmaps"), []string{"Name", "Data", "Age"}, []cellCase{
		{name: "data and binary data", obj: cm, cells: []any{"cfg", int64(2), "5m"}},
	})
	secret := &corev1.Secret{ObjectMeta: objMeta("token"), Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"t": nil, "u": nil}}
	checkKind(t, lookup(t, "", "v1", "secrets"), []string{"Name", "Type", "Data", "Age"}, []cellCase{
		{name: "opaque", obj: secret, cells: []any{"token", "Opaque", int64(2), "5m"}},
	})
	sa := &corev1.ServiceAccount{ObjectMeta: objMeta("builder"), Secrets: []corev1.ObjectReference{{Name: "s"}}}
	checkKind(t, lookup(t, "", "v1", "serviceaccounts"), []string{"Name", "Age"}, []cellCase{
		{name: "one secret, not printed since 1.37", obj: sa, cells: []any{"builder", "5m"}},
	})
}

// TestServiceTable mirrors upstream's TestPrintService.
func TestServiceTable(t *testing.T) {
	svc := func(typ corev1.ServiceType, mutate func(*corev1.Service)) *corev1.Service {
		s := &corev1.Service{ObjectMeta: objMeta("web"), Spec: corev1.ServiceSpec{Type: typ, ClusterIPs: []string{"10.9.8.7"},
			Ports: []corev1.ServicePort{{Protocol: "TCP", Port: 2233}}}}
		if mutate != nil {
			mutate(s)
		}
		return s
	}
	lb := corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "3.4.5.6"}, {Hostname: "lb.example.com"}, {IP: "2.3.4.5"}}}
	header := []string{"Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "+Selector"}
	checkKind(t, lookup(t, "", "v1", "services"), header, []cellCase{
		{name: "cluster ip", obj: svc(corev1.ServiceTypeClusterIP, func(s *corev1.Service) { s.Spec.Selector = map[string]string{"app": "web"} }),
			cells: []any{"web", "ClusterIP", "10.9.8.7", "<none>", "2233/TCP", "5m", "app=web"}},
		{name: "node port", obj: svc(corev1.ServiceTypeNodePort, func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 9999 }),
			cells: []any{"web", "NodePort", "10.9.8.7", "<none>", "2233:9999/TCP", "5m", "<none>"}},
		{name: "load balancer pending", obj: svc(corev1.ServiceTypeLoadBalancer, nil),
			cells: []any{"web", "LoadBalancer", "10.9.8.7", "<pending>", "2233/TCP", "5m", "<none>"}},
		{name: "load balancer with external ips", obj: svc(corev1.ServiceTypeLoadBalancer, func(s *corev1.Service) {
			s.Status.LoadBalancer = lb
			s.Spec.ExternalIPs = []string{"80.11.12.10"}
		}), cells: []any{"web", "LoadBalancer", "10.9.8.7", "2.3.4.5,3.4.5.6,lb.example.com,80.11.12.10", "2233/TCP", "5m", "<none>"}},
		{name: "external name", obj: svc(corev1.ServiceTypeExternalName, func(s *corev1.Service) {
			s.Spec.ExternalName, s.Spec.ClusterIPs, s.Spec.Ports = "db.example.com", nil, nil
		}), cells: []any{"web", "ExternalName", "<none>", "db.example.com", "<none>", "5m", "<none>"}},
		// upstream's printer reads clusterIPs only (test/upstream/printercolumns)
		{name: "headless, clusterIP only", obj: svc(corev1.ServiceTypeClusterIP, func(s *corev1.Service) {
			s.Spec.ClusterIPs, s.Spec.ClusterIP = nil, "None"
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Protocol: "UDP", Port: 53})
		}), cells: []any{"web", "ClusterIP", "<none>", "<none>", "2233/TCP,53/UDP", "5m", "<none>"}},
	})
}

// TestEndpointsTable mirrors upstream's TestPrintEndpoint.
func TestEndpointsTable(t *testing.T) {
	addrs := func(ips ...string) []corev1.EndpointAddress {
		out := make([]corev1.EndpointAddress, len(ips))
		for i, ip := range ips {
			out[i].IP = ip
		}
		return out
	}
	ep := func(subsets ...corev1.EndpointSubset) *corev1.Endpoints {
		return &corev1.Endpoints{ObjectMeta: objMeta("web"), Subsets: subsets}
	}
	checkKind(t, lookup(t, "", "v1", "endpoints"), []string{"Name", "Endpoints", "Age"}, []cellCase{
		{name: "empty", obj: ep(), cells: []any{"web", "<none>", "5m"}},
		{name: "no ports", obj: ep(corev1.EndpointSubset{Addresses: addrs("1.2.3.4", "5.6.7.8")}), cells: []any{"web", "1.2.3.4,5.6.7.8", "5m"}},
		{name: "more than three", obj: ep(corev1.EndpointSubset{Addresses: addrs("1.2.3.4", "5.6.7.8", "::1"),
			Ports: []corev1.EndpointPort{{Port: 8001}, {Port: 8002}}}),
			cells: []any{"web", "1.2.3.4:8001,5.6.7.8:8001,[::1]:8001 + 3 more...", "5m"}},
	})
}

// TestNodeTable mirrors upstream's TestPrintNodeStatus, TestPrintNodeRole
// and the wide node tests.
func TestNodeTable(t *testing.T) {
	node := func(labels map[string]string, unschedulable bool, conds ...corev1.NodeCondition) *corev1.Node {
		n := &corev1.Node{ObjectMeta: objMeta("node1"), Spec: corev1.NodeSpec{Unschedulable: unschedulable},
			Status: corev1.NodeStatus{Conditions: conds, NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.37.0"}}}
		n.Namespace, n.Labels = "", labels
		return n
	}
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}
	notReady := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse}
	full := node(nil, false, ready)
	full.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "1.1.1.1"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.1"}}
	full.Status.NodeInfo.OSImage, full.Status.NodeInfo.KernelVersion = "Debian 13", "6.12"
	unknown := []any{"<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"}
	row := func(status, roles string) []any {
		return append([]any{"node1", status, roles, "5m", "v1.37.0"}, unknown...)
	}
	header := []string{"Name", "Status", "Roles", "Age", "Version", "+Internal-IP", "+External-IP", "+OS-Image", "+Kernel-Version", "+Container-Runtime"}
	checkKind(t, lookup(t, "", "v1", "nodes"), header, []cellCase{
		{name: "ready", obj: node(nil, false, ready), cells: row("Ready", "<none>")},
		{name: "not ready, cordoned", obj: node(nil, true, notReady), cells: row("NotReady,SchedulingDisabled", "<none>")},
		{name: "no conditions", obj: node(nil, false), cells: row("Unknown", "<none>")},
		{name: "roles", obj: node(map[string]string{"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/control-plane": "",
			"kubernetes.io/role": "edge", "node-role.kubernetes.io/": "x"}, false, ready), cells: row("Ready", "control-plane,edge,worker")},
		{name: "wide", obj: full, cells: []any{"node1", "Ready", "<none>", "5m", "v1.37.0", "10.0.0.1", "1.1.1.1", "Debian 13", "6.12", "<unknown>"}},
	})
}

// TestEventTables mirrors upstream's TestPrintEvent, for core and
// events.k8s.io events.
func TestEventTables(t *testing.T) {
	header := []string{"Last Seen", "Type", "Reason", "Object", "+Subobject", "+Source", "Message", "+First Seen", "+Count", "+Name"}
	old := &corev1.Event{ObjectMeta: objMeta("web.1"), Type: "Warning", Reason: "BackOff", Message: "  Back-off restarting  ",
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web", FieldPath: "spec.containers{app}"},
		Source:         corev1.EventSource{Component: "kubelet", Host: "node1"},
		FirstTimestamp: ago(3 * time.Hour), LastTimestamp: ago(2 * time.Minute), Count: 6}
	series := &corev1.Event{ObjectMeta: objMeta("web.2"), Type: "Normal", Reason: "Pulled",
		InvolvedObject: corev1.ObjectReference{Kind: "Node"}, ReportingController: "kubelet",
		EventTime: metav1.NewMicroTime(now.Add(-time.Hour)),
		Series:    &corev1.EventSeries{Count: 4, LastObservedTime: metav1.NewMicroTime(now.Add(-10 * time.Second))}}
	singleton := &corev1.Event{ObjectMeta: objMeta("web.3"), Type: "Normal", Reason: "Scheduled",
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web"}, ReportingController: "default-scheduler", ReportingInstance: "s-1",
		EventTime: metav1.NewMicroTime(now.Add(-time.Minute))}
	checkKind(t, lookup(t, "", "v1", "events"), header, []cellCase{
		{name: "legacy", obj: old, cells: []any{"2m", "Warning", "BackOff", "pod/web", "spec.containers{app}", "kubelet, node1", "Back-off restarting", "3h", int64(6), "web.1"}},
		{name: "series", obj: series, cells: []any{"10s", "Normal", "Pulled", "node", "", "kubelet", "", "60m", int64(4), "web.2"}},
		{name: "singleton", obj: singleton, cells: []any{"60s", "Normal", "Scheduled", "pod/web", "", "default-scheduler, s-1", "", "60s", int64(1), "web.3"}},
	})
	v1 := &eventsv1.Event{ObjectMeta: objMeta("web.4"), Type: "Normal", Reason: "Killing", Note: "Stopping container",
		Regarding: corev1.ObjectReference{Kind: "Pod", Name: "web"}, ReportingController: "kubelet",
		EventTime: metav1.NewMicroTime(now.Add(-2 * time.Minute)),
		Series:    &eventsv1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(now.Add(-time.Minute))}}
	checkKind(t, lookup(t, "events.k8s.io", "v1", "events"), header, []cellCase{
		{name: "events.k8s.io", obj: v1, cells: []any{"60s", "Normal", "Killing", "pod/web", "", "kubelet", "Stopping container", "2m", int64(2), "web.4"}},
	})
}

// TestVolumeTables mirrors upstream's TestPrintPersistentVolume and
// TestPrintPersistentVolumeClaim.
func TestVolumeTables(t *testing.T) {
	storage := corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("4Gi")}
	pv := &corev1.PersistentVolume{ObjectMeta: objMeta("pv1"), Spec: corev1.PersistentVolumeSpec{
		Capacity: storage, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadOnlyMany, corev1.ReadOnlyMany},
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain, StorageClassName: "fast",
		ClaimRef: &corev1.ObjectReference{Namespace: "default", Name: "data"}, VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem)},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}}
	pv.Namespace = ""
	released := pv.DeepCopy()
	released.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "beta"}
	released.Spec.ClaimRef, released.Spec.VolumeMode, released.Spec.Capacity = nil, nil, nil
	released.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumeFailed, Reason: "Recycler"}
	checkKind(t, lookup(t, "", "v1", "persistentvolumes"), []string{"Name", "Capacity", "Access Modes", "Reclaim Policy", "Status",
		"Claim", "StorageClass", "VolumeAttributesClass", "Reason", "Age", "+VolumeMode"}, []cellCase{
		{name: "bound", obj: pv, cells: []any{"pv1", "4Gi", "ROX,RWOP", "Retain", "Bound", "default/data", "fast", "<unset>", "", "5m", "Filesystem"}},
		{name: "failed, beta class", obj: released, cells: []any{"pv1", "0", "ROX,RWOP", "Retain", "Failed", "", "beta", "<unset>", "Recycler", "5m", "<unset>"}},
	})

	pending := &corev1.PersistentVolumeClaim{ObjectMeta: objMeta("data"), Spec: corev1.PersistentVolumeClaimSpec{
		StorageClassName: ptr.To("fast"), Resources: corev1.VolumeResourceRequirements{Requests: storage}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}
	bound := pending.DeepCopy()
	bound.Spec.VolumeName, bound.Spec.VolumeAttributesClassName = "pv1", ptr.To("gold")
	bound.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: storage,
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}}
	checkKind(t, lookup(t, "", "v1", "persistentvolumeclaims"), []string{"Name", "Status", "Volume", "Capacity", "Access Modes",
		"StorageClass", "VolumeAttributesClass", "Age", "+VolumeMode"}, []cellCase{
		{name: "pending", obj: pending, cells: []any{"data", "Pending", "", "", "", "fast", "<unset>", "5m", "<unset>"}},
		{name: "bound", obj: bound, cells: []any{"data", "Bound", "pv1", "4Gi", "RWO", "fast", "gold", "5m", "<unset>"}},
	})
}

// TestOtherCoreKinds mirrors upstream's TestPrintReplicationController,
// TestPrintResourceQuota, TestPrintPodTemplate and TestPrintComponentStatus.
func TestOtherCoreKinds(t *testing.T) {
	rc := &corev1.ReplicationController{ObjectMeta: objMeta("rc1"), Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](5),
		Selector: map[string]string{"app": "web"}, Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "a", Image: "nginx"}, {Name: "b", Image: "redis"}}}}},
		Status: corev1.ReplicationControllerStatus{Replicas: 3, ReadyReplicas: 1}}
	checkKind(t, lookup(t, "", "v1", "replicationcontrollers"), []string{"Name", "Desired", "Current", "Ready", "Age",
		"+Containers", "+Images", "+Selector"}, []cellCase{
		{name: "rc", obj: rc, cells: []any{"rc1", int64(5), int64(3), int64(1), "5m", "a,b", "nginx,redis", "app=web"}},
	})

	quota := &corev1.ResourceQuota{ObjectMeta: objMeta("q"), Status: corev1.ResourceQuotaStatus{
		Hard: corev1.ResourceList{"pods": resource.MustParse("10"), "limits.cpu": resource.MustParse("2"), "requests.memory": resource.MustParse("1Gi"), "limits.memory": resource.MustParse("2Gi")},
		Used: corev1.ResourceList{"pods": resource.MustParse("3"), "limits.cpu": resource.MustParse("500m")}}}
	checkKind(t, lookup(t, "", "v1", "resourcequotas"), []string{"Name", "Request", "Limit", "Age"}, []cellCase{
		{name: "quota", obj: quota, cells: []any{"q", "pods: 3/10, requests.memory: 0/1Gi", "limits.cpu: 500m/2, limits.memory: 0/2Gi", "5m"}},
	})

	pt := &corev1.PodTemplate{ObjectMeta: objMeta("tmpl"), Template: corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}}}
	checkKind(t, lookup(t, "", "v1", "podtemplates"), []string{"Name", "Containers", "Images", "Pod Labels"}, []cellCase{
		{name: "template", obj: pt, cells: []any{"tmpl", "app", "busybox", "a=b"}},
	})

	cs := &corev1.ComponentStatus{ObjectMeta: objMeta("etcd-0"), Conditions: []corev1.ComponentCondition{
		{Type: corev1.ComponentHealthy, Status: corev1.ConditionFalse, Message: "down", Error: "timeout"}}}
	checkKind(t, lookup(t, "", "v1", "componentstatuses"), []string{"Name", "Status", "Message", "Error"}, []cellCase{
		{name: "unhealthy", obj: cs, cells: []any{"etcd-0", "Unhealthy", "down", "timeout"}},
	})
}
