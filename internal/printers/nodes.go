package printers

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var nodeInfoDoc = corev1.NodeSystemInfo{}.SwaggerDoc()

var nodePrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Status", "The status of the node"),
	str("Roles", "The roles of the node"),
	ageColumn,
	str("Version", nodeInfoDoc["kubeletVersion"]),
	wide(str("Internal-IP", corev1.NodeStatus{}.SwaggerDoc()["addresses"])),
	wide(str("External-IP", corev1.NodeStatus{}.SwaggerDoc()["addresses"])),
	wide(str("OS-Image", nodeInfoDoc["osImage"])),
	wide(str("Kernel-Version", nodeInfoDoc["kernelVersion"])),
	wide(str("Container-Runtime", nodeInfoDoc["containerRuntimeVersion"])),
}, func(n *corev1.Node, now time.Time) []any {
	status := []string{"Unknown"}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			status[0] = "Not" + string(c.Type)
			if c.Status == corev1.ConditionTrue {
				status[0] = string(c.Type)
			}
		}
	}
	if n.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}
	info := n.Status.NodeInfo
	return []any{n.Name, strings.Join(status, ","), orNone(strings.Join(nodeRoles(n), ",")), since(n.CreationTimestamp, now), info.KubeletVersion,
		nodeAddress(n, corev1.NodeInternalIP), nodeAddress(n, corev1.NodeExternalIP),
		orUnknown(info.OSImage), kernelVersion(info), orUnknown(info.ContainerRuntimeVersion)}
})

// kernelVersion is the node's kernel version, then its architecture in
// parentheses when it reports one (since 1.37).
func kernelVersion(info corev1.NodeSystemInfo) string {
	if info.Architecture == "" {
		return orUnknown(info.KernelVersion)
	}
	return orUnknown(info.KernelVersion) + " (" + info.Architecture + ")"
}

// nodeRoles are the sorted roles named by node-role.kubernetes.io/<role>
// labels and the kubernetes.io/role label.
func nodeRoles(n *corev1.Node) []string {
	set := map[string]bool{}
	for k, v := range n.Labels {
		switch {
		case strings.HasPrefix(k, "node-role.kubernetes.io/"):
			if role := strings.TrimPrefix(k, "node-role.kubernetes.io/"); role != "" {
				set[role] = true
			}
		case k == "kubernetes.io/role" && v != "":
			set[v] = true
		}
	}
	roles := make([]string, 0, len(set))
	for r := range set {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	return roles
}

// nodeAddress is the node's first address of type t, or "<none>".
func nodeAddress(n *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range n.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

var eventDoc = corev1.Event{}.SwaggerDoc()

// eventColumns put the newest information first; NAME is a wide column.
var eventColumns = []metav1.TableColumnDefinition{
	str("Last Seen", eventDoc["lastTimestamp"]),
	str("Type", eventDoc["type"]),
	str("Reason", eventDoc["reason"]),
	str("Object", eventDoc["involvedObject"]),
	wide(str("Subobject", corev1.ObjectReference{}.SwaggerDoc()["fieldPath"])),
	wide(str("Source", eventDoc["source"])),
	str("Message", eventDoc["message"]),
	wide(str("First Seen", eventDoc["firstTimestamp"])),
	wide(str("Count", eventDoc["count"])),
	wide(nameColumn),
}

var eventPrinter = kind(eventColumns, printEvent)

// eventsV1Printer prints events.k8s.io events with the same columns, as
// upstream does by converting them to core events.
var eventsV1Printer = kind(eventColumns, func(e *eventsv1.Event, now time.Time) []any {
	core := &corev1.Event{
		ObjectMeta: e.ObjectMeta, InvolvedObject: e.Regarding, Reason: e.Reason, Message: e.Note,
		Source: e.DeprecatedSource, FirstTimestamp: e.DeprecatedFirstTimestamp, LastTimestamp: e.DeprecatedLastTimestamp,
		Count: e.DeprecatedCount, Type: e.Type, EventTime: e.EventTime, Action: e.Action, Related: e.Related,
		ReportingController: e.ReportingController, ReportingInstance: e.ReportingInstance,
	}
	if e.Series != nil {
		core.Series = &corev1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return printEvent(core, now)
})

func printEvent(e *corev1.Event, now time.Time) []any {
	first := since(e.FirstTimestamp, now)
	if e.FirstTimestamp.IsZero() {
		first = sinceMicro(e.EventTime, now)
	}
	last := since(e.LastTimestamp, now)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last, count = sinceMicro(e.Series.LastObservedTime, now), e.Series.Count
	} else if count == 0 {
		count = 1 // singleton events of the new API carry no count
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target = fmt.Sprintf("%s/%s", target, e.InvolvedObject.Name)
	}
	component, instance := e.Source.Component, e.Source.Host
	if component == "" {
		component = e.ReportingController
	}
	if instance == "" {
		instance = e.ReportingInstance
	}
	source := component
	if instance != "" {
		source += ", " + instance
	}
	return []any{last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath, source, strings.TrimSpace(e.Message), first, int64(count), e.Name}
}

var pvSpecDoc, pvStatusDoc = corev1.PersistentVolumeSpec{}.SwaggerDoc(), corev1.PersistentVolumeStatus{}.SwaggerDoc()

var persistentVolumePrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Capacity", pvSpecDoc["capacity"]),
	str("Access Modes", pvSpecDoc["accessModes"]),
	str("Reclaim Policy", pvSpecDoc["persistentVolumeReclaimPolicy"]),
	str("Status", pvStatusDoc["phase"]),
	str("Claim", pvSpecDoc["claimRef"]),
	str("StorageClass", "StorageClass of the pv"),
	str("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
	str("Reason", pvStatusDoc["reason"]),
	ageColumn,
	wide(str("VolumeMode", pvSpecDoc["volumeMode"])),
}, func(pv *corev1.PersistentVolume, now time.Time) []any {
	claim := ""
	if ref := pv.Spec.ClaimRef; ref != nil {
		claim = ref.Namespace + "/" + ref.Name
	}
	phase := string(pv.Status.Phase)
	if pv.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	class := pv.Spec.StorageClassName
	if c, ok := pv.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		class = c
	}
	capacity := pv.Spec.Capacity[corev1.ResourceStorage]
	return []any{pv.Name, capacity.String(), accessModes(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
		phase, claim, class, unset(pv.Spec.VolumeAttributesClassName), pv.Status.Reason, since(pv.CreationTimestamp, now),
		unset((*string)(pv.Spec.VolumeMode))}
})

var pvcSpecDoc, pvcStatusDoc = corev1.PersistentVolumeClaimSpec{}.SwaggerDoc(), corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()

var persistentVolumeClaimPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Status", pvcStatusDoc["phase"]),
	str("Volume", pvcSpecDoc["volumeName"]),
	str("Capacity", pvcStatusDoc["capacity"]),
	str("Access Modes", pvcStatusDoc["accessModes"]),
	str("StorageClass", "StorageClass of the pvc"),
	str("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
	ageColumn,
	wide(str("VolumeMode", pvcSpecDoc["volumeMode"])),
}, func(pvc *corev1.PersistentVolumeClaim, now time.Time) []any {
	phase := string(pvc.Status.Phase)
	if pvc.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	capacity, modes := "", ""
	if pvc.Spec.VolumeName != "" {
		q := pvc.Status.Capacity[corev1.ResourceStorage]
		capacity, modes = q.String(), accessModes(pvc.Status.AccessModes)
	}
	class := deref(pvc.Spec.StorageClassName)
	if c, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		class = c
	}
	return []any{pvc.Name, phase, pvc.Spec.VolumeName, capacity, modes, class, unset(pvc.Spec.VolumeAttributesClassName),
		since(pvc.CreationTimestamp, now), unset((*string)(pvc.Spec.VolumeMode))}
})

// accessModes abbreviates access modes, always in the order RWO,ROX,RWX,RWOP.
func accessModes(modes []corev1.PersistentVolumeAccessMode) string {
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{{corev1.ReadWriteOnce, "RWO"}, {corev1.ReadOnlyMany, "ROX"}, {corev1.ReadWriteMany, "RWX"}, {corev1.ReadWriteOncePod, "RWOP"}} {
		for _, have := range modes {
			if have == m.mode {
				out = append(out, m.short)
				break
			}
		}
	}
	return strings.Join(out, ",")
}

// unset is *s, or "<unset>" when s is nil.
func unset(s *string) string {
	if s == nil {
		return "<unset>"
	}
	return *s
}
