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

// The EndpointSlice mirroring session (testdata/epslice-mirror/record.sh)
// was recorded on kube-apiserver + kube-controller-manager 1.37.2: a
// Service without selector and its Endpoints written by hand (two
// subsets, IPv4 and IPv6, ready and not ready), the Endpoints applied
// with other addresses, labels, annotations and a port changed, labelled
// skip-mirror, unlabelled, and the Service given a selector.
var mirrorSessionSteps = []string{"1-created", "2-updated", "3-skip-mirror", "4-unskipped", "5-selector"}

var mirrorSliceName = regexp.MustCompile(`\bext-[a-z0-9]{5}\b`)

// summarizeMirrorSlices prints each EndpointSlice's compared fields (all
// but names' random suffixes, uids, versions and times), endpoints sorted
// (upstream's order within a slice is random).
func summarizeMirrorSlices(t *testing.T, raw string) string {
	t.Helper()
	var list discoveryv1.EndpointSliceList
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		t.Fatalf("decoding EndpointSlices: %v\n%s", err, raw)
	}
	var out []string
	for _, s := range list.Items {
		if m := s.Labels[discoveryv1.LabelManagedBy]; m != "endpointslicemirroring-controller.k8s.io" {
			// the EndpointSlice controller's slice once the Service has a
			// selector: its trigger-time annotation differs (see
			// TestEndpointSliceMirroringSessionMatchesKCM)
			out = append(out, fmt.Sprintf("slice of %s %s", m, s.AddressType))
			continue
		}
		var owners []string
		for _, o := range s.OwnerReferences {
			owners = append(owners, fmt.Sprintf("%s/%s/%s controller=%s block=%s", o.APIVersion, o.Kind, o.Name, show(o.Controller), show(o.BlockOwnerDeletion)))
		}
		var ports []string
		for _, p := range s.Ports {
			ports = append(ports, fmt.Sprintf("%s:%s/%s app=%s", show(p.Name), show(p.Port), show(p.Protocol), show(p.AppProtocol)))
		}
		var eps []string
		for _, e := range s.Endpoints {
			c := e.Conditions
			target := "<nil>"
			if e.TargetRef != nil {
				target = e.TargetRef.Kind + "/" + e.TargetRef.Namespace + "/" + e.TargetRef.Name
			}
			eps = append(eps, fmt.Sprintf("  endpoint %v ready=%s serving=%s terminating=%s hostname=%s node=%s zone=%s target=%s",
				e.Addresses, show(c.Ready), show(c.Serving), show(c.Terminating), show(e.Hostname), show(e.NodeName), show(e.Zone), target))
		}
		slices.Sort(eps)
		out = append(out, mirrorSliceName.ReplaceAllString(fmt.Sprintf("slice %s generateName=%s %s labels=%v annotations=%v owners=%v ports=%v\n%s",
			s.Name, s.GenerateName, s.AddressType, s.Labels, s.Annotations, owners, ports, strings.Join(eps, "\n")), "ext-XXXXX"))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// summarizeMirroredEndpoints prints the Endpoints' labels, annotation
// keys and subsets.
func summarizeMirroredEndpoints(t *testing.T, raw string) string {
	t.Helper()
	var list corev1.EndpointsList
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		t.Fatalf("decoding Endpoints: %v\n%s", err, raw)
	}
	var out []string
	for _, ep := range list.Items {
		var keys []string
		for k := range ep.Annotations {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out = append(out, fmt.Sprintf("endpoints %s labels=%v annotations=%v subsets=%d", ep.Name, ep.Labels, keys, len(ep.Subsets)))
	}
	return strings.Join(out, "\n")
}

func show[T any](p *T) string {
	if p == nil {
		return "<nil>"
	}
	return fmt.Sprint(*p)
}

// normalizeMirrorTable keeps the NAME (suffix replaced), ADDRESSTYPE and
// PORTS columns, rows sorted: the ENDPOINTS column lists a slice's first
// addresses, in an order upstream does not fix.
func normalizeMirrorTable(s string) string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if strings.HasPrefix(line, "Warning:") || strings.HasPrefix(line, "No resources found") { // stderr, recorded with stdout
			continue
		}
		fields := strings.Fields(mirrorSliceName.ReplaceAllString(line, "ext-XXXXX"))
		if len(fields) > 3 {
			fields = fields[:3]
		}
		out = append(out, strings.Join(fields, " "))
	}
	if len(out) > 1 {
		slices.Sort(out[1:])
	}
	return strings.Join(out, "\n")
}

type mirrorSession struct {
	t *testing.T
	a *admitd
}

func (s *mirrorSession) run(args ...string) string {
	s.t.Helper()
	return s.a.MustKubectl(s.t, "", append([]string{"-n", "sess"}, args...)...)
}

func (s *mirrorSession) state() string {
	table, _, _ := s.a.Kubectl(s.t, "", "-n", "sess", "get", "endpointslices")
	return normalizeMirrorTable(table) + "\n" + summarizeMirrorSlices(s.t, s.run("get", "endpointslices", "-o", "json")) +
		"\n" + summarizeMirroredEndpoints(s.t, s.run("get", "endpoints", "-o", "json"))
}

func recordedMirrorState(t *testing.T, step string) string {
	t.Helper()
	read := func(suffix string) string {
		b, err := os.ReadFile(filepath.Join("testdata/epslice-mirror", step+suffix))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return normalizeMirrorTable(read(".table.txt")) + "\n" + summarizeMirrorSlices(t, read(".endpointslices.json")) +
		"\n" + summarizeMirroredEndpoints(t, read(".endpoints.json"))
}

// await waits until the state is the recorded one of step.
func (s *mirrorSession) await(step string) {
	s.t.Helper()
	want := recordedMirrorState(s.t, step)
	var got string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got = s.state(); got == want {
			return
		}
	}
	s.t.Fatalf("step %s: state differs from kube-controller-manager's:\n--- got\n%s\n--- want\n%s", step, got, want)
}

// The same kubectl session against admitd and against kube-apiserver +
// kube-controller-manager 1.37.2 (recorded, see mirrorSessionSteps) ends
// each step with the same mirrored EndpointSlices, table and Endpoints.
// Once the Service has a selector, the EndpointSlice controller's empty
// slice is compared by its manager and address type only: kcm's carries
// the trigger-time annotation (the Service's creation time, the Service
// being new to its tracker), admitd's does not — a difference of the
// EndpointSlice controller left to it.
func TestEndpointSliceMirroringSessionMatchesKCM(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	s := &mirrorSession{t: t, a: a}
	dir := "testdata/epslice-mirror/"
	a.MustKubectl(t, "", "create", "namespace", "sess")
	a.WaitFor(t, "the default service account", "-n", "sess", "get", "serviceaccount", "default")
	s.run("create", "-f", dir+"svc.yaml")
	s.run("create", "-f", dir+"ep-1.yaml")
	s.await(mirrorSessionSteps[0])
	s.run("apply", "-f", dir+"ep-2.yaml")
	s.await(mirrorSessionSteps[1])
	s.run("label", "endpoints", "ext", "endpointslice.kubernetes.io/skip-mirror=true")
	s.await(mirrorSessionSteps[2])
	s.run("label", "endpoints", "ext", "endpointslice.kubernetes.io/skip-mirror-")
	s.await(mirrorSessionSteps[3])
	s.run("patch", "service", "ext", "-p", `{"spec":{"selector":{"app":"ext"}}}`)
	s.await(mirrorSessionSteps[4])
}
