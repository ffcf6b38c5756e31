package workloads

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// The endpoints session (testdata/endpoints/record.sh) was recorded on
// kube-apiserver + kube-controller-manager 1.37.2 with two Nodes made by
// hand and the pods bound and made Running and Ready by hand; here admitd
// runs two simulated nodes that do the same. Pod names, IPs, node names,
// UIDs, random slice suffixes and times differ between the two and are
// normalized away; everything else of the EndpointSlices and Endpoints
// (which exist, labels, owners, annotations present, ports, endpoint
// conditions, ready and not-ready addresses) must be the same, as must
// the table kubectl get endpointslices,endpoints prints.
var endpointsSessionSteps = []string{"1-created", "2-scaled-up", "3-unready", "4-scaled-down", "5-terminated", "6-service-deleted"}

var (
	ipPattern        = regexp.MustCompile(`\b\d+\.\d+\.\d+\.\d+\b`)
	podNamePattern   = regexp.MustCompile(`\bweb-[0-9a-f]{8,10}-[a-z0-9]{5}\b`)
	sliceNamePattern = regexp.MustCompile(`\b(web(-headless)?)-[a-z0-9]{5}\b`)
	nodeNamePattern  = regexp.MustCompile(`\bnode-\d+\b`)
	spaces           = regexp.MustCompile(`[ \t]+`)
)

// normalizeEndpointsTable drops the AGE column, the deprecation warning,
// and replaces what differs between clusters.
func normalizeEndpointsTable(s string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "Warning:") {
			continue
		}
		line = podNamePattern.ReplaceAllString(line, "web-POD")
		line = sliceNamePattern.ReplaceAllString(line, "$1-XXXXX")
		line = ipPattern.ReplaceAllString(line, "IP")
		fields := strings.Fields(spaces.ReplaceAllString(line, " "))
		if len(fields) > 1 {
			fields = fields[:len(fields)-1] // AGE
		}
		out = append(out, strings.Join(fields, " "))
	}
	// rows sort by name, and the names differ: sort each block's rows
	for start := 0; start < len(out); {
		end := start + 1
		for end < len(out) && out[end] != "" {
			end++
		}
		if start+1 < end {
			slices.Sort(out[start+1 : end])
		}
		start = end + 1
	}
	return strings.Join(out, "\n")
}

func normalizeEndpointsText(s string) string {
	s = podNamePattern.ReplaceAllString(s, "web-POD")
	s = sliceNamePattern.ReplaceAllString(s, "$1-XXXXX")
	s = nodeNamePattern.ReplaceAllString(s, "NODE")
	return ipPattern.ReplaceAllString(s, "IP")
}

// summarizeSlices prints each EndpointSlice's compared fields, one line
// per slice and per endpoint, endpoints sorted.
func summarizeSlices(t *testing.T, raw string) string {
	t.Helper()
	var list discoveryv1.EndpointSliceList
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		t.Fatalf("decoding EndpointSlices: %v\n%s", err, raw)
	}
	var out []string
	for _, s := range list.Items {
		_, trigger := s.Annotations[corev1.EndpointsLastChangeTriggerTime]
		var owners []string
		for _, o := range s.OwnerReferences {
			owners = append(owners, fmt.Sprintf("%s/%s/%s controller=%v block=%v", o.APIVersion, o.Kind, o.Name, *o.Controller, *o.BlockOwnerDeletion))
		}
		var ports []string
		for _, p := range s.Ports {
			ports = append(ports, fmt.Sprintf("%s:%d/%s", *p.Name, *p.Port, *p.Protocol))
		}
		var eps []string
		for _, e := range s.Endpoints {
			c := e.Conditions
			eps = append(eps, normalizeEndpointsText(fmt.Sprintf("  endpoint %v ready=%v serving=%v terminating=%v node=%s zone=%v target=%s/%s/%s",
				e.Addresses, *c.Ready, *c.Serving, *c.Terminating, deref(e.NodeName), e.Zone != nil, e.TargetRef.Kind, e.TargetRef.Namespace, e.TargetRef.Name)))
		}
		slices.Sort(eps)
		out = append(out, normalizeEndpointsText(fmt.Sprintf("slice %s generateName=%s %s labels=%v owners=%v trigger-time=%v ports=%v\n%s",
			s.Name, s.GenerateName, s.AddressType, s.Labels, owners, trigger, ports, strings.Join(eps, "\n"))))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// summarizeEndpoints prints each Endpoints object's compared fields.
func summarizeEndpoints(t *testing.T, raw string) string {
	t.Helper()
	var list corev1.EndpointsList
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		t.Fatalf("decoding Endpoints: %v\n%s", err, raw)
	}
	addrs := func(list []corev1.EndpointAddress) string {
		var out []string
		for _, a := range list {
			out = append(out, normalizeEndpointsText(fmt.Sprintf("%s node=%s target=%s/%s/%s", a.IP, deref(a.NodeName), a.TargetRef.Kind, a.TargetRef.Namespace, a.TargetRef.Name)))
		}
		slices.Sort(out)
		return "[" + strings.Join(out, ", ") + "]"
	}
	var out []string
	for _, ep := range list.Items {
		var keys []string
		for k := range ep.Annotations {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		s := fmt.Sprintf("endpoints %s labels=%v annotations=%v", ep.Name, ep.Labels, keys)
		for _, ss := range ep.Subsets {
			s += fmt.Sprintf("\n  subset ports=%v addresses=%s notReady=%s", ss.Ports, addrs(ss.Addresses), addrs(ss.NotReadyAddresses))
		}
		out = append(out, normalizeEndpointsText(s))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

type endpointsSession struct {
	t *testing.T
	a *admitd
}

func (s *endpointsSession) run(args ...string) string {
	s.t.Helper()
	return s.a.MustKubectl(s.t, "", append([]string{"-n", "sess"}, args...)...)
}

// state is what a step compares: the table and both summaries.
func (s *endpointsSession) state() string {
	table, _, _ := s.a.Kubectl(s.t, "", "-n", "sess", "get", "endpointslices,endpoints")
	return normalizeEndpointsTable(table) + "\n" + summarizeSlices(s.t, s.run("get", "endpointslices", "-o", "json")) +
		"\n" + summarizeEndpoints(s.t, s.run("get", "endpoints", "-o", "json"))
}

func recordedEndpointsState(t *testing.T, step string) string {
	t.Helper()
	read := func(suffix string) string {
		b, err := os.ReadFile(filepath.Join("testdata/endpoints", step+suffix))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return normalizeEndpointsTable(read(".table.txt")) + "\n" + summarizeSlices(t, read(".endpointslices.json")) +
		"\n" + summarizeEndpoints(t, read(".endpoints.json"))
}

// await waits until the state is the recorded one of step (the
// controllers and simulated nodes get there within seconds).
func (s *endpointsSession) await(step string) {
	s.t.Helper()
	want := recordedEndpointsState(s.t, step)
	var got string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if got = s.state(); got == want {
			return
		}
	}
	s.t.Fatalf("step %s: state differs from kube-controller-manager's:\n--- got\n%s\n--- want\n%s", step, got, want)
}

// makeUnready plays the kubelet of a pod whose readiness probe fails. The
// transition is stamped at least a second after the pod became ready:
// conditions keep whole seconds, and the controllers' trigger-time
// tracker only counts a transition later than the one it saw, so a pod
// made unready within the second it became ready (admitd is that fast)
// would leave out the last-change-trigger-time kube-controller-manager
// recorded.
func (s *endpointsSession) makeUnready(pod string) {
	at := time.Now().UTC().Truncate(time.Second)
	ready := strings.TrimSpace(s.run("get", "pod", pod, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].lastTransitionTime}`))
	if became, err := time.Parse(time.RFC3339, ready); err == nil && !at.After(became) {
		at = became.Add(time.Second)
	}
	now := at.Format(time.RFC3339)
	s.run("patch", "pod", pod, "--subresource=status", "--type=strategic", "-p",
		`{"status":{"conditions":[{"type":"Ready","status":"False","lastTransitionTime":"`+now+`"},{"type":"ContainersReady","status":"False","lastTransitionTime":"`+now+`"}]}}`)
}

// The same kubectl session against admitd (two simulated nodes) and
// against kube-apiserver + kube-controller-manager 1.37.2 (recorded, see
// endpointsSessionSteps) ends each step with the same EndpointSlices and
// Endpoints: create a Deployment and expose it as a ClusterIP and a
// headless Service, scale up, a pod becoming unready, scale down (the
// deleted pods terminating), the kubelet finishing them, and a Service
// deleted.
func TestEndpointsSessionMatchesKCM(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir(), "--simulated-nodes=2")
	s := &endpointsSession{t: t, a: a}
	a.MustKubectl(t, "", "create", "namespace", "sess")
	a.WaitFor(t, "the default service account", "-n", "sess", "get", "serviceaccount", "default")
	s.run("create", "deployment", "web", "--image=nginx", "--replicas=2", "--port=80")
	s.run("expose", "deployment", "web", "--port=80")
	s.run("expose", "deployment", "web", "--name=web-headless", "--cluster-ip=None", "--port=80")
	s.await("1-created")
	s.run("scale", "deployment", "web", "--replicas=3")
	s.await("2-scaled-up")
	s.makeUnready(strings.TrimSpace(s.run("get", "pods", "-o", "jsonpath={.items[0].metadata.name}")))
	s.await("3-unready")
	s.run("scale", "deployment", "web", "--replicas=1")
	s.await("4-scaled-down")
	for _, p := range strings.Fields(s.run("get", "pods", "-o", `jsonpath={range .items[?(@.metadata.deletionTimestamp)]}{.metadata.name}{"\n"}{end}`)) {
		s.run("delete", "pod", p, "--grace-period=0", "--force")
	}
	s.await("5-terminated")
	s.run("delete", "service", "web-headless")
	s.await("6-service-deleted")
}
