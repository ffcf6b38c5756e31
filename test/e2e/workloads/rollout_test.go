package workloads

import (
	"os"
	"strings"
	"testing"
	"time"
)

// rolloutStateJSONPath print a Deployment's revision, counts, paused and
// conditions, and each ReplicaSet's name, revision annotations and
// replicas.
const (
	deploymentStateJSONPath  = `{.metadata.annotations.deployment\.kubernetes\.io/revision} {.status.replicas}/{.status.updatedReplicas}/{.status.readyReplicas}/{.status.availableReplicas} paused={.spec.paused} {range .status.conditions[*]}[{.type} {.status} {.reason}: {.message}]{end}{"\n"}`
	replicaSetsStateJSONPath = `{range .items[*]}{.metadata.name} rev={.metadata.annotations.deployment\.kubernetes\.io/revision} hist={.metadata.annotations.deployment\.kubernetes\.io/revision-history} desired={.metadata.annotations.deployment\.kubernetes\.io/desired-replicas} max={.metadata.annotations.deployment\.kubernetes\.io/max-replicas} spec={.spec.replicas} status={.status.replicas}{"\n"}{end}`
)

// rolloutSession drives a Deployment through kubectl as a user would.
type rolloutSession struct {
	t  *testing.T
	a  *admitd
	ns string
}

func (s *rolloutSession) run(args ...string) string {
	s.t.Helper()
	out, errOut, err := s.a.Kubectl(s.t, "", append([]string{"-n", s.ns}, args...)...)
	if err != nil {
		s.t.Fatalf("kubectl %s: %v: %s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// markReady plays the kubelet: every pod is made Running and Ready.
func (s *rolloutSession) markReady() {
	for _, p := range strings.Fields(s.run("get", "pods", "-o", "name")) {
		_, _, _ = s.a.Kubectl(s.t, "", "-n", s.ns, "patch", p, "--subresource=status", "--type=merge",
			"-p", `{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`)
	}
}

func (s *rolloutSession) state() string {
	return s.run("get", "deploy", "web", "-o", "jsonpath="+deploymentStateJSONPath) + s.run("get", "rs", "-o", "jsonpath="+replicaSetsStateJSONPath)
}

// settle plays the kubelet until the state has not changed for 1.5s, and
// returns it under "## step".
func (s *rolloutSession) settle(step string) string {
	last, since := "", time.Now()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		s.markReady()
		cur := s.state()
		if cur != last {
			last, since = cur, time.Now()
		} else if time.Since(since) > 1500*time.Millisecond {
			break
		}
	}
	return "## " + step + "\n" + last
}

// The same kubectl session against admitd and against kube-apiserver +
// kube-controller-manager 1.37.2 (recorded, testdata/rollout) ends each
// step with the same Deployment and ReplicaSets: create, set image,
// rollout undo, pause, scale and set image while paused, resume, then
// rollout status and history. The pods are made ready as a kubelet
// would.
func TestRolloutSessionMatchesKCM(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
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
		if len(args) > 0 {
			s.run(args...)
		}
		got = append(got, s.settle(name))
	}
	step("create", "create", "deployment", "web", "--image=nginx", "--replicas=3")
	step("set image", "set", "image", "deployment/web", "nginx=nginx:1.27")
	step("undo", "rollout", "undo", "deployment/web")
	step("pause", "rollout", "pause", "deployment/web")
	step("scale while paused", "scale", "deployment/web", "--replicas=5")
	step("set image while paused", "set", "image", "deployment/web", "nginx=nginx:1.28")
	step("resume", "rollout", "resume", "deployment/web")
	got = append(got, s.run("rollout", "status", "deployment/web", "--timeout=20s")+s.run("rollout", "history", "deployment/web"))
	want, err := os.ReadFile("testdata/rollout/kcm-1.37.2.txt")
	if err != nil {
		t.Fatal(err)
	}
	if g := strings.Join(got, ""); g != string(want) {
		t.Errorf("session differs from kube-controller-manager's:\n--- got\n%s\n--- want\n%s", g, want)
	}
}
