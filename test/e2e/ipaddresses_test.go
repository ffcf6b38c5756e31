package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const badIPAddresses = `apiVersion: networking.k8s.io/v1
kind: IPAddress
metadata: {name: "127.1.0.050"}
spec: {parentRef: {resource: services, name: foo}}
---
apiVersion: networking.k8s.io/v1
kind: IPAddress
metadata: {name: "10.0.0.4"}
spec: {parentRef: {group: Bad_Group, namespace: "x%y"}}
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {name: three}
spec: {cidrs: ["10.1.0.0/24", "fd00::/64", "10.2.0.0/24"]}
`

// TestKubectlServiceCIDRsAndIPAddresses: kubectl sees cluster IPs as
// kube-apiserver 1.37.2 shows them (recorded side by side, both with
// --service-cluster-ip-range=127.1.0.0/24): discovery (ip), the default
// ServiceCIDR and the kubernetes Service's IPAddress with their columns,
// an IPAddress per Service gone with it, the allocation errors of kubectl
// create service, and invalid IPAddresses and ServiceCIDRs.
func TestKubectlServiceCIDRsAndIPAddresses(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir(), "--service-cluster-ip-range=127.1.0.0/24")
	resources := a.MustKubectl(t, "", "api-resources", "-o", "wide", "--api-group=networking.k8s.io")
	verbs := "create,delete,deletecollection,get,list,patch,update,watch"
	for _, want := range [][]string{
		{"ipaddresses", "ip", "networking.k8s.io/v1", "false", "IPAddress", verbs},
		{"servicecidrs", "networking.k8s.io/v1", "false", "ServiceCIDR", verbs},
	} {
		if !hasLine(resources, want) {
			t.Errorf("kubectl api-resources: no line %q in\n%s", want, resources)
		}
	}
	if out := a.MustKubectl(t, "", "get", "servicecidrs"); !hasLine(out, []string{"NAME", "CIDRS", "AGE"}) || !hasLine(out, []string{"kubernetes", "127.1.0.0/24"}) {
		t.Errorf("kubectl get servicecidrs:\n%s", out)
	}
	// kube-apiserver makes it Ready, then kube-controller-manager's
	// service-cidr-controller adds its finalizer and its own Ready message
	// (test/sidebyside-servicecidr.sh)
	const wantReady = "[\"networking.k8s.io/service-cidr-finalizer\"] Ready=True: Kubernetes Service CIDR is ready"
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		got := a.MustKubectl(t, "", "get", "servicecidr", "kubernetes", "-o", `jsonpath={.metadata.finalizers} {.status.conditions[0].type}={.status.conditions[0].status}: {.status.conditions[0].message}`)
		if got == wantReady {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Errorf("default ServiceCIDR = %q, want %q", got, wantReady)
			break
		}
	}
	// the kubernetes Service is created beside the server
	for start := time.Now(); !hasLine(a.MustKubectl(t, "", "get", "ipaddresses"), []string{"127.1.0.1", "services/default/kubernetes"}); {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("kubectl get ipaddresses: no line for the kubernetes Service after 10s:\n%s", a.MustKubectl(t, "", "get", "ipaddresses"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	a.MustKubectl(t, "", "create", "service", "clusterip", "x", "--tcp=80", "--clusterip=127.1.0.10")
	if out := a.MustKubectl(t, "", "get", "ip"); !hasLine(out, []string{"NAME", "PARENTREF"}) || !hasLine(out, []string{"127.1.0.10", "services/default/x"}) {
		t.Errorf("kubectl get ip:\n%s", out)
	}
	const refused = `error: failed to create ClusterIP service: Service "%s" is invalid: spec.clusterIPs: Invalid value: ["%s"]: failed to allocate IP %s: %s`
	for _, tc := range []struct{ name, ip, want string }{
		{"x2", "127.1.0.10", "provided IP is already allocated"},
		{"x3", "10.9.9.9", "the provided network does not match the current range"},
		{"x5", "127.1.0.255", "the provided network does not match the current range"},
	} {
		_, errOut, err := a.Kubectl(t, "", "create", "service", "clusterip", tc.name, "--tcp=80", "--clusterip="+tc.ip)
		if want := fmt.Sprintf(refused, tc.name, tc.ip, tc.ip, tc.want); err == nil || strings.TrimSpace(errOut) != want {
			t.Errorf("kubectl create service %s --clusterip=%s: %v, stderr %q, want %q", tc.name, tc.ip, err, errOut, want)
		}
	}
	a.MustKubectl(t, "", "delete", "service", "x")
	if out := a.MustKubectl(t, "", "get", "ip"); strings.Contains(out, "127.1.0.10") {
		t.Errorf("kubectl get ip after the Service's delete:\n%s", out)
	}
	_, errOut, err := a.Kubectl(t, badIPAddresses, "create", "-f", "-")
	for _, want := range []string{
		`IPAddress.networking.k8s.io "127.1.0.050" is invalid: metadata.name: Invalid value: "127.1.0.050": must not have leading 0s`,
		`IPAddress.networking.k8s.io "10.0.0.4" is invalid: [spec.parentRef.group: Invalid value: "Bad_Group": ` + dnsSubdomainMsg +
			`, spec.parentRef.namespace: Invalid value: "x%y": may not contain '%', spec.parentRef.resource: Required value, spec.parentRef.name: Required value]`,
		`ServiceCIDR.networking.k8s.io "three" is invalid: spec.cidrs: Invalid value: {"CIDRs":["10.1.0.0/24","fd00::/64","10.2.0.0/24"]}: may only hold up to 2 values`,
	} {
		if err == nil || !strings.Contains(errOut, want) {
			t.Errorf("kubectl create of invalid objects: %v, stderr\n%s\nwant\n%s", err, errOut, want)
		}
	}
}
