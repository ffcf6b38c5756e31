package workloads

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// What testdata/disruption/record.sh prints of the PodDisruptionBudgets,
// and the pods it leaves unready.
const (
	budgetsJSONPath      = `{range .items[*]}{.metadata.name} gen={.status.observedGeneration}/{.metadata.generation} expected={.status.expectedPods} desired={.status.desiredHealthy} healthy={.status.currentHealthy} allowed={.status.disruptionsAllowed} disrupted={.status.disruptedPods}{range .status.conditions[*]} [{.type} {.status} {.reason}: {.message} gen={.observedGeneration}]{end}{"\n"}{end}`
	unreadyJSONPath      = `{range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}`
	budgetEventsJSONPath = `{range .items[*]}{.involvedObject.name} {.source.component} {.type} {.reason}: {.message}{"\n"}{end}`
)

// budgetSession is record.sh's session on admitd.
type budgetSession struct {
	*rolloutSession
	http *http.Client
}

// markUnreadyReady plays the kubelet for every pod but lone (left
// Running and unready), patching only those not yet Ready.
func (s *budgetSession) markUnreadyReady() {
	for _, line := range strings.Split(strings.TrimSpace(s.run("get", "pods", "-l", "app!=lone", "-o", "jsonpath="+unreadyJSONPath)), "\n") {
		name, ready, _ := strings.Cut(line, " ")
		if name == "" || ready == "True" {
			continue
		}
		_, _, _ = s.a.Kubectl(s.t, "", "-n", s.ns, "patch", "pod", name, "--subresource=status", "--type=merge",
			"-p", `{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`)
	}
}

// settle returns the budgets under "## step" once they have not changed
// for 1 s, making pods ready meanwhile if ready.
func (s *budgetSession) settle(step string, ready bool) string {
	last, since := "", time.Now()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if ready {
			s.markUnreadyReady()
		}
		cur := s.run("get", "pdb", "-o", "jsonpath="+budgetsJSONPath)
		if cur != last {
			last, since = cur, time.Now()
		} else if time.Since(since) > time.Second {
			break
		}
	}
	return "## " + step + "\n" + strings.TrimRight(last, "\n") + "\n"
}

// firstReadyPod is the first by name of the Ready pods labelled app=app.
func (s *budgetSession) firstReadyPod(app string) string {
	var ready []string
	for _, line := range strings.Split(s.run("get", "pods", "-l", "app="+app, "-o", "jsonpath="+unreadyJSONPath), "\n") {
		if name, status, _ := strings.Cut(line, " "); status == "True" {
			ready = append(ready, name)
		}
	}
	if len(ready) == 0 {
		s.t.Fatalf("no Ready pod app=%s", app)
	}
	sort.Strings(ready)
	return ready[0]
}

// evict POSTs an Eviction of pod and prints the answer as record.sh's
// jq does.
func (s *budgetSession) evict(what, pod string) string {
	s.t.Helper()
	body := fmt.Sprintf(`{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":%q}}`, pod)
	resp, err := s.http.Post(s.a.URL+"/api/v1/namespaces/"+s.ns+"/pods/"+pod+"/eviction", "application/json", bytes.NewBufferString(body))
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	var st metav1.Status
	if err := json.Unmarshal(data, &st); err != nil {
		s.t.Fatalf("eviction answer %s: %v", data, err)
	}
	var causes []string
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			causes = append(causes, string(c.Type)+": "+c.Message)
		}
	}
	return fmt.Sprintf("evict %s: %d %s %s %s causes=%s\n", what, resp.StatusCode, st.Status, st.Reason, st.Message, strings.Join(causes, "; "))
}

// The PodDisruptionBudget session recorded on kube-apiserver +
// kube-controller-manager 1.37.2 (testdata/disruption: record.sh, pods
// made ready by hand) gives the same budget status, DisruptionAllowed
// conditions, eviction answers and disruption-controller events on
// admitd: minAvailable 2 over a 3-replica Deployment (an eviction
// allowed, the pod replaced), raised to 3 (an eviction refused with 429),
// maxUnavailable 30% over 4 replicas (two evictions allowed, the third
// refused), a budget selecting no pods (NoPods), a pod whose controller
// is a ConfigMap (SyncFailed, and the eviction's failed-sync message), an
// unready pod without controller (UnmanagedPods; refused, then allowed
// by unhealthyPodEvictionPolicy AlwaysAllow).
func TestDisruptionSessionMatchesKCM(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	cfg := a.RestConfig(t)
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &budgetSession{rolloutSession: &rolloutSession{t: t, a: a, ns: "sess"}, http: httpClient}
	if _, errOut, err := a.Kubectl(t, "", "create", "namespace", "sess"); err != nil {
		t.Fatal(errOut)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, _, err := a.Kubectl(t, "", "-n", "sess", "get", "serviceaccount", "default"); err == nil {
			break
		}
	}
	var got []string
	s.run("create", "deployment", "web", "--image=nginx", "--replicas=3")
	s.run("create", "deployment", "api", "--image=nginx", "--replicas=4")
	s.run("create", "pdb", "web", "--selector=app=web", "--min-available=2")
	s.run("create", "pdb", "api", "--selector=app=api", "--max-unavailable=30%")
	s.run("create", "pdb", "none", "--selector=app=none", "--min-available=1")
	got = append(got, s.settle("create", true))
	got = append(got, s.evict("a web pod", s.firstReadyPod("web")))
	got = append(got, s.settle("web replaced", true))
	s.run("patch", "pdb", "web", "--type=merge", "-p", `{"spec":{"minAvailable":3}}`)
	got = append(got, s.settle("web minAvailable 3", true))
	got = append(got, s.evict("a web pod", s.firstReadyPod("web")))
	got = append(got, s.evict("an api pod", s.firstReadyPod("api")))
	got = append(got, s.evict("an api pod", s.firstReadyPod("api")))
	got = append(got, s.settle("two api pods evicted", false))
	got = append(got, s.evict("an api pod", s.firstReadyPod("api")))
	got = append(got, s.settle("api replaced", true))
	s.run("create", "pdb", "owned", "--selector=app=owned", "--max-unavailable=1")
	s.run("create", "configmap", "owner")
	owned, err := os.ReadFile("testdata/disruption/owned.yaml")
	if err != nil {
		t.Fatal(err)
	}
	uid := s.run("get", "configmap", "owner", "-o", "jsonpath={.metadata.uid}")
	a.MustKubectl(t, strings.ReplaceAll(string(owned), "OWNER_UID", uid), "-n", "sess", "apply", "-f", "-")
	got = append(got, s.settle("owned by a configmap", true))
	got = append(got, s.evict("the pod owned by a configmap", "owned"))
	s.run("run", "lone", "--image=nginx", "--labels=app=lone")
	s.run("patch", "pod", "lone", "--subresource=status", "--type=merge",
		"-p", `{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"False"}]}}`)
	s.run("create", "pdb", "lone", "--selector=app=lone", "--max-unavailable=1")
	got = append(got, s.settle("lone", true))
	got = append(got, s.evict("the unready unmanaged pod", "lone"))
	s.run("patch", "pdb", "lone", "--type=merge", "-p", `{"spec":{"unhealthyPodEvictionPolicy":"AlwaysAllow"}}`)
	got = append(got, s.evict("the unready unmanaged pod, AlwaysAllow", "lone"))
	got = append(got, s.settle("lone evicted", true))
	events := s.run("get", "events", "--field-selector", "involvedObject.kind=PodDisruptionBudget", "-o", "jsonpath="+budgetEventsJSONPath)

	recorded, err := os.ReadFile("testdata/disruption/kcm-1.37.2.txt")
	if err != nil {
		t.Fatal(err)
	}
	want, wantEvents, _ := strings.Cut(string(recorded), "## events\n")
	if g := strings.Join(got, ""); g != want {
		t.Errorf("session differs from kube-controller-manager's:\n--- got\n%s\n--- want\n%s", g, want)
	}
	if g, w := distinctEvents(events), distinctEvents(wantEvents); !slices.Equal(g, w) {
		t.Errorf("events differ from kube-controller-manager's:\n--- got\n%s\n--- want\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
}
