package workloads

import (
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// What testdata/statefulset/record.sh prints of the StatefulSet web: its
// status, and its pods, claims and revisions with what the controller
// gives them.
const (
	statefulSetJSONPath    = `{.status.replicas}/{.status.readyReplicas}/{.status.currentReplicas}/{.status.updatedReplicas}/{.status.availableReplicas} current={.status.currentRevision} update={.status.updateRevision} collisions={.status.collisionCount} observed={.status.observedGeneration}/{.metadata.generation}{"\n"}`
	statefulPodsJSONPath   = `{range .items[*]}pod {.metadata.name} generateName={.metadata.generateName} labels={.metadata.labels} hostname={.spec.hostname} subdomain={.spec.subdomain} claims={.spec.volumes[*].persistentVolumeClaim.claimName} owner={.metadata.ownerReferences[*].kind}/{.metadata.ownerReferences[*].name} image={.spec.containers[0].image}{"\n"}{end}`
	statefulClaimsJSONPath = `{range .items[*]}pvc {.metadata.name} labels={.metadata.labels} owners={.metadata.ownerReferences[*].kind}/{.metadata.ownerReferences[*].name} controller={.metadata.ownerReferences[*].controller}{"\n"}{end}`
	revisionsJSONPath      = `{range .items[*]}revision {.metadata.name} {.revision} labels={.metadata.labels} owner={.metadata.ownerReferences[*].kind}/{.metadata.ownerReferences[*].name}{"\n"}{end}`
	statefulEventsJSONPath = `{range .items[*]}{.source.component} {.type} {.reason}: {.message}{"\n"}{end}`
)

func (s *rolloutSession) statefulState() string {
	return s.run("get", "statefulset", "web", "-o", "jsonpath="+statefulSetJSONPath) +
		s.run("get", "pods", "-o", "jsonpath="+statefulPodsJSONPath) +
		s.run("get", "pvc", "-o", "jsonpath="+statefulClaimsJSONPath) +
		s.run("get", "controllerrevisions", "-o", "jsonpath="+revisionsJSONPath)
}

// settleStateful waits until the state has not changed for 2 s (the
// simulated nodes run the pods), and returns it under "## step".
func (s *rolloutSession) settleStateful(step string) string {
	last, since := "", time.Now()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		cur := s.statefulState()
		if cur != last {
			last, since = cur, time.Now()
		} else if time.Since(since) > 2*time.Second {
			break
		}
	}
	return "## " + step + "\n" + strings.TrimRight(last, "\n") + "\n"
}

// distinctEvents are the lines of events, sorted, each once, without
// client-go's combined event: after ten similar events its aggregator
// makes one "(combined from similar events): " event whose message is
// the latest similar one's, and which messages go to it later depends on a
// random eviction from its set of seen messages (sets.PopAny), on kcm as
// here, so its last message differs from run to run (a CI run ended with
// "Create Pod web-1" where the recording has "Create Pod web-4").
//
// Also without the pod updates that fix a new pod's claims: the controller
// sets a new claim's owners from its claim cache right after creating it,
// skips a claim the cache does not hold yet, and its next sync fixes the
// owners with an update of the pod ("Update Pod web-4 ... successful"), as
// upstream's CreateStatefulPod and UpdateStatefulPod do: whether that
// happens is how far the cache lags, on kcm as here (a CI run had one,
// most likely so).
func distinctEvents(text string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		if !strings.Contains(l, combinedPrefix) && !strings.Contains(l, podClaimsFixed) {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

const (
	combinedPrefix = "(combined from similar events): "
	podClaimsFixed = "Normal SuccessfulUpdate: Update Pod "
)

// The StatefulSet session recorded on kube-apiserver + kube-controller-
// manager 1.37.2 (testdata/statefulset: record.sh, its pods made ready by
// hand) ends each step with the same StatefulSet status, pods (names,
// identity labels, hostname, subdomain, claims, owner, image), claims
// (labels, owners by retention policy), ControllerRevisions (names with
// upstream's hash, numbers, labels) and the same statefulset-controller
// events, on admitd with two simulated nodes running the pods: create 3
// replicas with a claim template, scale to 5 and to 2, set image (rollout
// status completes), rollout history, rollout undo.
func TestStatefulSetSessionMatchesKCM(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir(), "--simulated-nodes=2")
	s := &rolloutSession{t: t, a: a, ns: "sess"}
	if _, errOut, err := a.Kubectl(t, "", "create", "namespace", "sess"); err != nil {
		t.Fatal(errOut)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, _, err := a.Kubectl(t, "", "-n", "sess", "get", "serviceaccount", "default"); err == nil {
			break
		}
	}
	var got []string
	step := func(name string, args ...string) {
		s.run(args...)
		got = append(got, s.settleStateful(name))
	}
	step("create", "apply", "-f", "testdata/statefulset/web.yaml")
	step("scale up", "scale", "statefulset", "web", "--replicas=5")
	step("scale down", "scale", "statefulset", "web", "--replicas=2")
	step("set image", "set", "image", "statefulset/web", "nginx=nginx:1.27")
	got = append(got, s.run("rollout", "status", "statefulset/web", "--timeout=60s")+s.run("rollout", "history", "statefulset/web"))
	step("undo", "rollout", "undo", "statefulset/web")
	events := s.run("get", "events", "--field-selector", "involvedObject.kind=StatefulSet,involvedObject.name=web", "-o", "jsonpath="+statefulEventsJSONPath)

	recorded, err := os.ReadFile("testdata/statefulset/kcm-1.37.2.txt")
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
