package workloads

import (
	"github.com/admitd/admitd/test/e2e/harness"

	"context"
	"flag"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// recordDaemonSetOn, when set, is the kubeconfig of a kube-apiserver +
// kube-controller-manager 1.37.2 (KCM=1 start.sh, with
// KCM_FLAGS=--controllers=*,-node-lifecycle-controller so that the
// hand-made nodes are not tainted for their missing heartbeats): the
// DaemonSet session then runs there, the test playing the nodes' kubelet,
// and is written to testdata/daemonset/kcm-1.37.2.txt.
var recordDaemonSetOn = flag.String("record-daemonset-on", "", "kubeconfig of a real cluster to record the DaemonSet session on")

const daemonSetSessionFile = "testdata/daemonset/kcm-1.37.2.txt"

// agentDaemonSet runs on every node but those labelled skip-agent; its
// pods stop within a second of being deleted.
const agentDaemonSet = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      terminationGracePeriodSeconds: 1
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: skip-agent, operator: DoesNotExist}
      containers:
      - name: agent
        image: nginx
`

// The state printed after each step: the DaemonSet's generation and
// status, its ControllerRevisions, and its pods by node.
const (
	daemonSetStateJSONPath = `gen={.metadata.generation} observed={.status.observedGeneration} desired={.status.desiredNumberScheduled} current={.status.currentNumberScheduled} ready={.status.numberReady} updated={.status.updatedNumberScheduled} available={.status.numberAvailable} unavailable={.status.numberUnavailable} misscheduled={.status.numberMisscheduled}{"\n"}`
	revisionsStateJSONPath = `{range .items[*]}{.metadata.name} revision={.revision} hash={.metadata.labels.controller-revision-hash} owner={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}{"\n"}{end}`
	daemonPodsJSONPath     = `{range .items[*]}{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values[0]} {.metadata.name} hash={.metadata.labels.controller-revision-hash} generation={.metadata.labels.pod-template-generation} owner={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} image={.spec.containers[0].image} deleting={.metadata.deletionTimestamp}{"\n"}{end}`
	daemonPodSpecJSONPath  = `{range .items[*]}{.metadata.generateName} {.metadata.labels} {.spec.affinity} {range .spec.tolerations[*]}[{.key} {.operator} {.effect}]{end}{"\n"}{end}`
)

var agentPodName = regexp.MustCompile(`\bagent-[a-z0-9]{5}\b`)

// combinedEvents starts the message of the event client-go's recorder
// makes of ten similar ones in a row.
const combinedEvents = "(combined from similar events): "

// daemonSetSession drives a DaemonSet through kubectl; on a real cluster
// (kubelet set) it plays the nodes' kubelet between steps.
type daemonSetSession struct {
	t       *testing.T
	a       *admitd
	ns      string
	kubelet kubernetes.Interface // nil on admitd: its simulated nodes are the kubelets
}

func (s *daemonSetSession) run(args ...string) string {
	s.t.Helper()
	out, errOut, err := s.a.Kubectl(s.t, "", append([]string{"-n", s.ns}, args...)...)
	if err != nil {
		s.t.Fatalf("kubectl %s: %v: %s", strings.Join(args, " "), err, errOut)
	}
	return out
}

func (s *daemonSetSession) state() string {
	pods := strings.Split(strings.TrimSpace(s.run("get", "pods", "-o", "jsonpath="+daemonPodsJSONPath)), "\n")
	sort.Strings(pods)
	return s.run("get", "ds", "agent", "-o", "jsonpath="+daemonSetStateJSONPath) +
		s.run("get", "controllerrevisions", "-o", "jsonpath="+revisionsStateJSONPath) +
		agentPodName.ReplaceAllString(strings.Join(pods, "\n"), "agent-XXXXX") + "\n"
}

// settle plays the kubelet (on a real cluster) until the state has not
// changed for 2s, and returns it under "## step".
func (s *daemonSetSession) settle(step string) string {
	last, since := "", time.Now()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		s.playKubelet()
		cur := s.state()
		if cur != last {
			last, since = cur, time.Now()
		} else if time.Since(since) > 2*time.Second {
			break
		}
	}
	return "## " + step + "\n" + last
}

// playKubelet does on a real cluster what the scheduler and kubelets of
// admitd's simulated nodes do: binds each pending pod to the node its
// affinity names, makes it Running and Ready, and removes a deleted pod.
func (s *daemonSetSession) playKubelet() {
	if s.kubelet == nil {
		return
	}
	ctx := s.t.Context()
	pods, err := s.kubelet.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		switch {
		case p.DeletionTimestamp != nil:
			err = s.kubelet.CoreV1().Pods(s.ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		case p.Spec.NodeName == "":
			node := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values[0]
			err = s.kubelet.CoreV1().Pods(s.ns).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name},
				Target: corev1.ObjectReference{Kind: "Node", Name: node}}, metav1.CreateOptions{})
		case p.Status.Phase == corev1.PodPending:
			now := metav1.Now()
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
			_, err = s.kubelet.CoreV1().Pods(s.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		}
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			s.t.Logf("playing the kubelet on %s: %v", p.Name, err)
		}
	}
}

// createNode makes a node on a real cluster as a kubelet registers it
// (the labels given), Ready and without the not-ready taint.
func createNode(ctx context.Context, c kubernetes.Interface, name string, labels map[string]string) error {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels,
		Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}}}
	if _, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
		return err
	}
	for _, step := range []func(context.Context, kubernetes.Interface, string) error{markNodeReady, untaintReadyNode} {
		err := step(ctx, c, name)
		for apierrors.IsConflict(err) {
			err = step(ctx, c, name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// untaintReadyNode removes the not-ready taint kube-apiserver's
// TaintNodesByCondition gave the node, as the node lifecycle controller
// does once a node is ready (admitd's simulated nodes do it themselves).
func untaintReadyNode(ctx context.Context, c kubernetes.Interface, name string) error {
	n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeNotReady })
	_, err = c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	return err
}

// markNodeReady posts a Ready status for the node, as its kubelet.
func markNodeReady(ctx context.Context, c kubernetes.Interface, name string) error {
	n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(), Reason: "KubeletReady"}}
	n.Status.Capacity = corev1.ResourceList{"pods": resource.MustParse("110"), "cpu": resource.MustParse("8"), "memory": resource.MustParse("32Gi")}
	n.Status.Allocatable = n.Status.Capacity
	_, err = c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	return err
}

func simulatedNodeLabels(name string) map[string]string {
	return map[string]string{"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
		"kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
}

// events are the distinct "kind/name type reason: message" of the
// daemonset-controller's events, pod names replaced and the combined
// prefix of client-go's aggregation dropped, sorted.
func (s *daemonSetSession) events() string {
	out := s.run("get", "events", "-o", `jsonpath={range .items[?(@.source.component=="daemonset-controller")]}{.involvedObject.kind}/{.involvedObject.name} {.type} {.reason}: {.message}{"\n"}{end}`)
	out = strings.ReplaceAll(agentPodName.ReplaceAllString(out, "agent-XXXXX"), combinedEvents, "")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	sort.Strings(lines)
	return "## events\n" + strings.Join(slices.Compact(lines), "\n") + "\n"
}

// The same kubectl session against admitd with 3 simulated nodes and
// against kube-apiserver + kube-controller-manager 1.37.2 (recorded in
// testdata/daemonset; nodes made by hand, the test playing their
// kubelets) ends each step with the same DaemonSet status,
// ControllerRevisions (names with upstream's hash, revisions) and pods
// (one per eligible node, hash and generation labels, node affinity,
// tolerations): create, set image (rollout status completes), a node
// labelled out and back, a node added, a surge rollout, OnDelete.
func TestDaemonSetSessionMatchesKCM(t *testing.T) {
	t.Parallel()
	s := startDaemonSetSession(t, "ds", nil)
	var got []string
	step := func(name string, args ...string) {
		if len(args) > 0 {
			s.run(args...)
		}
		got = append(got, s.settle(name))
	}
	if _, errOut, err := s.a.Kubectl(t, agentDaemonSet, "-n", s.ns, "create", "-f", "-"); err != nil {
		t.Fatal(errOut)
	}
	step("create")
	got = append(got, s.run("get", "pods", "--field-selector=spec.nodeName=node-0", "-o", "jsonpath="+daemonPodSpecJSONPath))
	step("set image", "set", "image", "ds/agent", "agent=nginx:1.27")
	got = append(got, s.run("rollout", "status", "ds/agent", "--timeout=60s"))
	step("label node-1 out", "label", "node", "node-1", "skip-agent=true")
	step("label node-1 back", "label", "node", "node-1", "skip-agent-")
	if s.kubelet != nil {
		if err := createNode(t.Context(), s.kubelet, "node-3", map[string]string{"kubernetes.io/hostname": "node-3"}); err != nil {
			t.Fatal(err)
		}
	} else {
		s.a.MustKubectl(t, `{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-3","labels":{"kubernetes.io/hostname":"node-3"},"annotations":{"kwok.x-k8s.io/node":"fake"}}}`, "create", "-f", "-")
	}
	step("node-3 added")
	s.run("patch", "ds", "agent", "--type=merge", "-p", `{"spec":{"updateStrategy":{"rollingUpdate":{"maxSurge":1,"maxUnavailable":0}}}}`)
	step("surge", "set", "image", "ds/agent", "agent=nginx:1.28")
	got = append(got, s.run("rollout", "status", "ds/agent", "--timeout=60s"))
	s.run("patch", "ds", "agent", "--type=merge", "-p", `{"spec":{"updateStrategy":{"type":"OnDelete","rollingUpdate":null}}}`)
	step("on delete", "set", "image", "ds/agent", "agent=nginx:1.29")
	for _, p := range strings.Fields(s.run("get", "pods", "--field-selector=spec.nodeName=node-0", "-o", "name")) {
		s.run("delete", p, "--wait=false")
	}
	step("on delete, node-0's pod deleted")
	got = append(got, s.run("rollout", "history", "ds/agent"), s.events())
	harness.RecordOrCompare(t, *recordDaemonSetOn != "", daemonSetSessionFile, strings.Join(got, ""))
}

// startDaemonSetSession starts admitd with 3 simulated nodes, or (when
// recording) makes the real cluster's nodes node-0, node-1 and node-2
// only; then creates the namespace ns with labels and waits for its
// default ServiceAccount.
func startDaemonSetSession(t *testing.T, ns string, labels map[string]string) *daemonSetSession {
	var s *daemonSetSession
	if *recordDaemonSetOn != "" {
		a := &admitd{Kubeconfig: *recordDaemonSetOn}
		c := kubernetes.NewForConfigOrDie(a.RestConfig(t))
		nodes, err := c.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes.Items {
			if err := c.CoreV1().Nodes().Delete(t.Context(), n.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 3 {
			name := fmt.Sprintf("node-%d", i)
			if err := createNode(t.Context(), c, name, simulatedNodeLabels(name)); err != nil {
				t.Fatal(err)
			}
		}
		s = &daemonSetSession{t: t, a: a, ns: ns, kubelet: c}
	} else {
		a := startAdmitd(t, t.TempDir(), "--simulated-nodes=3")
		s = &daemonSetSession{t: t, a: a, ns: ns}
		a.MustKubectl(t, "", "wait", "--for=condition=Ready", "node/node-0", "node/node-1", "node/node-2", "--timeout=30s")
	}
	s.createNamespace(ns, labels)
	return s
}

func (s *daemonSetSession) createNamespace(ns string, labels map[string]string) {
	s.a.MustKubectl(s.t, "", "create", "namespace", ns)
	for k, v := range labels {
		s.a.MustKubectl(s.t, "", "label", "namespace", ns, k+"="+v)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, _, err := s.a.Kubectl(s.t, "", "-n", ns, "get", "serviceaccount", "default"); err == nil {
			break
		}
	}
}
