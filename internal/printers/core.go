package printers

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

var namespacePrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Status", "The status of the namespace"),
	ageColumn,
}, func(ns *corev1.Namespace, now time.Time) []any {
	return []any{ns.Name, string(ns.Status.Phase), since(ns.CreationTimestamp, now)}
})

var configMapPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Data", corev1.ConfigMap{}.SwaggerDoc()["data"]),
	ageColumn,
}, func(cm *corev1.ConfigMap, now time.Time) []any {
	return []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), since(cm.CreationTimestamp, now)}
})

var secretPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Type", corev1.Secret{}.SwaggerDoc()["type"]),
	str("Data", corev1.Secret{}.SwaggerDoc()["data"]),
	ageColumn,
}, func(s *corev1.Secret, now time.Time) []any {
	return []any{s.Name, string(s.Type), int64(secretKeys(s)), since(s.CreationTimestamp, now)}
})

// serviceAccountPrinter: no Secrets column since 1.37.
var serviceAccountPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	ageColumn,
}, func(sa *corev1.ServiceAccount, now time.Time) []any {
	return []any{sa.Name, since(sa.CreationTimestamp, now)}
})

var serviceSpecDoc = corev1.ServiceSpec{}.SwaggerDoc()

var servicePrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Type", serviceSpecDoc["type"]),
	str("Cluster-IP", serviceSpecDoc["clusterIP"]),
	str("External-IP", serviceSpecDoc["externalIPs"]),
	str("Port(s)", serviceSpecDoc["ports"]),
	ageColumn,
	wide(str("Selector", serviceSpecDoc["selector"])),
}, func(svc *corev1.Service, now time.Time) []any {
	clusterIP := "<none>" // upstream reads clusterIPs only
	if len(svc.Spec.ClusterIPs) > 0 {
		clusterIP = svc.Spec.ClusterIPs[0]
	}
	ports := make([]string, len(svc.Spec.Ports))
	for i, p := range svc.Spec.Ports {
		ports[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if p.NodePort > 0 {
			ports[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		}
	}
	return []any{svc.Name, string(svc.Spec.Type), clusterIP, serviceExternalIP(svc), orNone(strings.Join(ports, ",")),
		since(svc.CreationTimestamp, now), labels.FormatLabels(svc.Spec.Selector)}
})

// serviceExternalIP is the EXTERNAL-IP cell: external IPs, load-balancer
// ingress points, or the external name, depending on the service type.
func serviceExternalIP(svc *corev1.Service) string {
	external := strings.Join(svc.Spec.ExternalIPs, ",")
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		return orNone(external)
	case corev1.ServiceTypeLoadBalancer:
		ing := svc.Status.LoadBalancer.Ingress
		ips, hosts := make([]string, len(ing)), make([]string, len(ing))
		for i := range ing {
			ips[i], hosts[i] = ing[i].IP, ing[i].Hostname
		}
		lb := loadBalancerAddresses(ips, hosts)
		switch {
		case external != "" && lb != "":
			return lb + "," + external
		case external != "":
			return external
		case lb != "":
			return lb
		}
		return "<pending>"
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}

var endpointsPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Endpoints", corev1.Endpoints{}.SwaggerDoc()["subsets"]),
	ageColumn,
}, func(ep *corev1.Endpoints, now time.Time) []any {
	return []any{ep.Name, formatEndpoints(ep), since(ep.CreationTimestamp, now)}
})

// formatEndpoints lists the first three address:port pairs (bare addresses
// for subsets without ports) and how many more there are.
func formatEndpoints(ep *corev1.Endpoints) string {
	if len(ep.Subsets) == 0 {
		return "<none>"
	}
	const max = 3
	var list []string
	count := 0
	for _, ss := range ep.Subsets {
		if len(ss.Ports) == 0 {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if len(list) < max {
					list = append(list, a.IP)
				}
			}
			continue
		}
		for _, p := range ss.Ports {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if len(list) < max {
					list = append(list, net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
				}
			}
		}
	}
	if count > len(list) {
		return fmt.Sprintf("%s + %d more...", strings.Join(list, ","), count-max)
	}
	return strings.Join(list, ",")
}

var rcSpecDoc, rcStatusDoc = corev1.ReplicationControllerSpec{}.SwaggerDoc(), corev1.ReplicationControllerStatus{}.SwaggerDoc()

var replicationControllerPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	integer("Desired", rcSpecDoc["replicas"]),
	integer("Current", rcStatusDoc["replicas"]),
	integer("Ready", rcStatusDoc["readyReplicas"]),
	ageColumn,
	containersColumn,
	imagesColumn,
	wide(str("Selector", rcSpecDoc["selector"])),
}, func(rc *corev1.ReplicationController, now time.Time) []any {
	var containers []corev1.Container
	if rc.Spec.Template != nil {
		containers = rc.Spec.Template.Spec.Containers
	}
	names, images := containerCells(containers)
	return []any{rc.Name, int64(deref(rc.Spec.Replicas)), int64(rc.Status.Replicas), int64(rc.Status.ReadyReplicas),
		since(rc.CreationTimestamp, now), names, images, labels.FormatLabels(rc.Spec.Selector)}
})

var resourceQuotaPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Request", "Request represents a minimum amount of cpu/memory that a container may consume."),
	str("Limit", "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
	ageColumn,
}, func(q *corev1.ResourceQuota, now time.Time) []any {
	names := make([]string, 0, len(q.Status.Hard))
	for n := range q.Status.Hard {
		names = append(names, string(n))
	}
	sort.Strings(names)
	var requests, limits []string
	for _, n := range names {
		used, hard := q.Status.Used[corev1.ResourceName(n)], q.Status.Hard[corev1.ResourceName(n)]
		entry := fmt.Sprintf("%s: %s/%s", n, used.String(), hard.String())
		if pieces := strings.Split(n, "."); len(pieces) > 1 && pieces[0] == "limits" {
			limits = append(limits, entry)
		} else {
			requests = append(requests, entry)
		}
	}
	return []any{q.Name, strings.Join(requests, ", "), strings.Join(limits, ", "), since(q.CreationTimestamp, now)}
})

// podTemplatePrinter has no Age column upstream.
var podTemplatePrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Containers", "Names of each container in the template."),
	str("Images", "Images referenced by each container in the template."),
	str("Pod Labels", "The labels for the pod template."),
}, func(pt *corev1.PodTemplate, _ time.Time) []any {
	names, images := containerCells(pt.Template.Spec.Containers)
	return []any{pt.Name, names, images, labels.FormatLabels(pt.Template.Labels)}
})

var componentStatusPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Status", "Status of the component conditions"),
	str("Message", "Message of the component conditions"),
	str("Error", "Error of the component conditions"),
}, func(cs *corev1.ComponentStatus, _ time.Time) []any {
	status, message, errText := "Unknown", "", ""
	for _, c := range cs.Conditions {
		if c.Type == corev1.ComponentHealthy {
			status = "Unhealthy"
			if c.Status == corev1.ConditionTrue {
				status = "Healthy"
			}
			message, errText = c.Message, c.Error
			break
		}
	}
	return []any{cs.Name, status, message, errText}
})

// secretKeys counts the keys of data and stringData together, as
// upstream's internal Secret holds them (stringData merged into data).
func secretKeys(s *corev1.Secret) int {
	n := len(s.Data)
	for k := range s.StringData {
		if _, ok := s.Data[k]; !ok {
			n++
		}
	}
	return n
}
