package server

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// startSimulated starts a server with three simulated nodes whose leases
// are renewed every 200ms and NodeRestriction on, and waits for the nodes to be ready and
// untainted.
func startSimulated(t *testing.T) (kubernetes.Interface, *rest.Config) {
	t.Helper()
	o := testOptions(t)
	o.SimulatedNodes = SimulatedNodesOptions{Enabled: true, Nodes: 3, LeaseRenewInterval: 200 * time.Millisecond}
	o.EnableAdmissionPlugins = []string{"NodeRestriction"} // as kubeadm: every kubelet write checked
	_, admin := startWith(t, o)
	c := kubernetes.NewForConfigOrDie(admin)
	waitUntil(t, 10*time.Second, "3 ready, untainted simulated nodes", func() bool {
		nodes, err := c.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
		if err != nil || len(nodes.Items) != 3 {
			return false
		}
		for _, n := range nodes.Items {
			if len(n.Spec.Taints) != 0 || len(n.Status.Conditions) != 4 || n.Status.Conditions[3].Status != corev1.ConditionTrue {
				return false
			}
		}
		return true
	})
	return c, admin
}

func waitUntil(t *testing.T, timeout time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func simplePod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}
}

// A simulated node registers as a kubelet does and posts the kubelet's
// status: capacity, the pressure conditions and Ready with the kubelet's
// reasons, addresses, the kubelet endpoint, node info.
func TestSimulatedNodeStatus(t *testing.T) {
	c, _ := startSimulated(t)
	node, err := c.CoreV1().Nodes().Get(t.Context(), "node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cond := range node.Status.Conditions {
		got = append(got, string(cond.Type)+"="+string(cond.Status)+" "+cond.Reason+": "+cond.Message)
	}
	want := []string{
		"MemoryPressure=False KubeletHasSufficientMemory: kubelet has sufficient memory available",
		"DiskPressure=False KubeletHasNoDiskPressure: kubelet has no disk pressure",
		"PIDPressure=False KubeletHasSufficientPID: kubelet has sufficient PID available",
		"Ready=True KubeletReady: kubelet is posting ready status",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("conditions:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if cpu := node.Status.Allocatable.Cpu().String(); cpu != "32" {
		t.Errorf("allocatable cpu = %s, want 32", cpu)
	}
	if a := node.Status.Addresses; len(a) != 2 || a[0].Address != "192.0.2.2" || a[1].Address != "node-1" {
		t.Errorf("addresses = %v, want InternalIP 192.0.2.2 and Hostname node-1", a)
	}
	if node.Status.NodeInfo.KubeletVersion != "v1.37.2" || node.Status.DaemonEndpoints.KubeletEndpoint.Port != 10250 {
		t.Errorf("nodeInfo %+v, daemonEndpoints %+v", node.Status.NodeInfo, node.Status.DaemonEndpoints)
	}
	if node.Labels[corev1.LabelHostname] != "node-1" || node.Annotations["kwok.x-k8s.io/node"] != "fake" {
		t.Errorf("labels %v, annotations %v", node.Labels, node.Annotations)
	}
	if !slices.ContainsFunc(node.ManagedFields, func(e metav1.ManagedFieldsEntry) bool { return strings.HasPrefix(e.Manager, "kubelet") }) {
		t.Errorf("managedFields = %+v, want the kubelet's among them", node.ManagedFields)
	}
}

// A bare pod is bound by the scheduler and run by its node's kubelet:
// Running, with the kubelet's conditions and container statuses.
func TestSimulatedPodRuns(t *testing.T) {
	c, _ := startSimulated(t)
	ctx := t.Context()
	if _, err := c.CoreV1().Pods("default").Create(ctx, simplePod("web"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pod *corev1.Pod
	waitUntil(t, 10*time.Second, "the pod to run", func() bool {
		p, err := c.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
		pod = p
		return err == nil && p.Status.Phase == corev1.PodRunning
	})
	if !strings.HasPrefix(pod.Spec.NodeName, "node-") {
		t.Errorf("nodeName = %q", pod.Spec.NodeName)
	}
	var conds []string
	for _, cond := range pod.Status.Conditions {
		conds = append(conds, string(cond.Type)+"="+string(cond.Status))
	}
	if got, want := strings.Join(conds, ","), "PodReadyToStartContainers=True,Initialized=True,Ready=True,ContainersReady=True,PodScheduled=True"; got != want {
		t.Errorf("conditions = %s, want %s", got, want)
	}
	cs := pod.Status.ContainerStatuses
	if len(cs) != 1 || !cs[0].Ready || cs[0].Started == nil || !*cs[0].Started || cs[0].State.Running == nil ||
		cs[0].Image != "docker.io/library/nginx:latest" || !strings.HasPrefix(cs[0].ImageID, "docker.io/library/nginx@sha256:") ||
		!strings.HasPrefix(cs[0].ContainerID, "containerd://") {
		t.Errorf("containerStatuses = %+v", cs)
	}
	if !strings.HasPrefix(pod.Status.PodIP, "10.244.") || !strings.HasPrefix(pod.Status.HostIP, "192.0.2.") || pod.Status.StartTime == nil {
		t.Errorf("podIP %q hostIP %q startTime %v", pod.Status.PodIP, pod.Status.HostIP, pod.Status.StartTime)
	}
	// The scheduler's event is written in the background, after the
	// binding.
	want := "Successfully assigned default/web to " + pod.Spec.NodeName
	waitUntil(t, 5*time.Second, "the Scheduled event "+want, func() bool {
		events, err := c.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		return slices.ContainsFunc(events.Items, func(e eventsv1.Event) bool {
			return e.Reason == "Scheduled" && e.Note == want && e.ReportingController == "default-scheduler"
		})
	})
	var kubelet []string
	waitUntil(t, 5*time.Second, "the kubelet's events", func() bool {
		evs, err := c.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "source=kubelet"})
		if err != nil {
			return false
		}
		kubelet = nil
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == "web" && e.Source.Host == pod.Spec.NodeName {
				kubelet = append(kubelet, e.Reason+" "+e.InvolvedObject.FieldPath+": "+e.Message)
			}
		}
		return len(kubelet) == 3
	})
	wantEvents := []string{
		`Pulled spec.containers{web}: Container image "nginx" already present on machine and can be accessed by the pod`,
		"Created spec.containers{web}: Container created",
		"Started spec.containers{web}: Container started",
	}
	if strings.Join(kubelet, "\n") != strings.Join(wantEvents, "\n") {
		t.Errorf("kubelet events:\n%s\nwant\n%s", strings.Join(kubelet, "\n"), strings.Join(wantEvents, "\n"))
	}
}

// A pod no node fits stays pending with kube-scheduler's condition and
// event.
func TestSimulatedPodUnschedulable(t *testing.T) {
	c, _ := startSimulated(t)
	ctx := t.Context()
	pod := simplePod("big")
	pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100")}
	if _, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
	// the scheduler's node cache may lag the API's ready, untainted nodes
	// at its first attempt (as kube-scheduler's informers may); a node
	// update sends the pod back to it, so the condition is waited for
	var cond *corev1.PodCondition
	waitUntil(t, 10*time.Second, "the Unschedulable condition for the ready nodes", func() bool {
		p, err := c.CoreV1().Pods("default").Get(ctx, "big", metav1.GetOptions{})
		if err != nil || len(p.Status.Conditions) == 0 {
			return false
		}
		pod, cond = p, &p.Status.Conditions[0]
		return cond.Message == want
	})
	if cond.Type != corev1.PodScheduled || cond.Status != corev1.ConditionFalse || cond.Reason != "Unschedulable" || cond.Message != want {
		t.Errorf("condition %+v, want PodScheduled False Unschedulable %q", cond, want)
	}
	if pod.Spec.NodeName != "" || pod.Status.Phase != corev1.PodPending {
		t.Errorf("nodeName %q phase %s, want unbound and Pending", pod.Spec.NodeName, pod.Status.Phase)
	}
	// the scheduler's event recorder writes after the condition
	waitUntil(t, 10*time.Second, "a FailedScheduling event for the ready nodes", func() bool {
		events, err := c.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, e := range events.Items {
			if e.Reason == "FailedScheduling" && e.Type == "Warning" && e.Note == want && e.Regarding.Name == "big" {
				return true
			}
		}
		return false
	})
}

// A pod deleted with a grace period is deleted for good by its kubelet
// once the grace period has passed, not before.
func TestSimulatedPodGracefulDeletion(t *testing.T) {
	c, _ := startSimulated(t)
	ctx := t.Context()
	if _, err := c.CoreV1().Pods("default").Create(ctx, simplePod("web"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var running *corev1.Pod
	waitUntil(t, 10*time.Second, "the pod to run", func() bool {
		p, err := c.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
		running = p
		return err == nil && p.Status.Phase == corev1.PodRunning
	})
	// From the running pod's version, so that the marking is an event of
	// its own (a watch from "now" may begin after it).
	w, err := c.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=web", ResourceVersion: running.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	start := time.Now()
	if err := c.CoreV1().Pods("default").Delete(ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: ptrTo(int64(2))}); err != nil {
		t.Fatal(err)
	}
	// The watch shows the pod marked, then failed (its containers killed
	// when the grace period ends), then gone.
	var seen []string
	timeout := time.After(10 * time.Second)
	for done := false; !done; {
		select {
		case ev := <-w.ResultChan():
			p, _ := ev.Object.(*corev1.Pod)
			if p == nil {
				t.Fatalf("watch event %v", ev)
			}
			step := string(ev.Type) + " " + string(p.Status.Phase)
			if len(seen) == 0 || seen[len(seen)-1] != step {
				seen = append(seen, step)
			}
			done = ev.Type == "DELETED"
		case <-timeout:
			t.Fatalf("timed out waiting for the pod to go; saw %v", seen)
		}
	}
	// deletionTimestamp has whole seconds, so up to one less.
	if d := time.Since(start); d < time.Second {
		t.Errorf("the pod went after %v, want its 2s grace period honoured", d)
	}
	if got, want := strings.Join(seen, ", "), "MODIFIED Running, MODIFIED Failed, DELETED Failed"; got != want {
		t.Errorf("watch saw %s, want %s", got, want)
	}
}

func ptrTo[T any](v T) *T { return &v }

// Each node renews its Lease in kube-node-lease, as its kubelet does.
func TestSimulatedNodeLeaseRenewed(t *testing.T) {
	c, _ := startSimulated(t)
	ctx := t.Context()
	var first time.Time
	waitUntil(t, 5*time.Second, "node-2's lease", func() bool {
		l, err := c.CoordinationV1().Leases("kube-node-lease").Get(ctx, "node-2", metav1.GetOptions{})
		if err != nil || l.Spec.RenewTime == nil {
			return false
		}
		if *l.Spec.HolderIdentity != "node-2" || *l.Spec.LeaseDurationSeconds != 40 || len(l.OwnerReferences) != 1 || l.OwnerReferences[0].Kind != "Node" {
			t.Fatalf("lease %+v", l)
		}
		first = l.Spec.RenewTime.Time
		return true
	})
	waitUntil(t, 5*time.Second, "the lease renewed", func() bool {
		l, err := c.CoordinationV1().Leases("kube-node-lease").Get(ctx, "node-2", metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime.After(first)
	})
}

// The kubelets write as their nodes: a policy refusing pod status writes
// of system:node:node-0 keeps node-0's pod pending while node-1's runs,
// and a node may not write the status of another node's pod.
func TestSimulatedKubeletWritesAsItsNode(t *testing.T) {
	c, admin := startSimulated(t)
	ctx := t.Context()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "no-node-0"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods/status"}}}}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "request.userInfo.username != 'system:node:node-0'"}},
		},
	}
	if _, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "no-node-0"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "no-node-0",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}
	if _, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, node := range []string{"node-0", "node-1"} {
		p := simplePod([]string{"on0", "on1"}[i])
		p.Spec.NodeName = node
		if _, err := c.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, 10*time.Second, "node-1's pod to run", func() bool {
		p, err := c.CoreV1().Pods("default").Get(ctx, "on1", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning
	})
	time.Sleep(500 * time.Millisecond)
	p, err := c.CoreV1().Pods("default").Get(ctx, "on0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.Phase != corev1.PodPending {
		t.Errorf("node-0's pod is %s, want Pending (its kubelet's writes refused)", p.Status.Phase)
	}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"phase": "Failed"}})
	_, err = asNode(admin, "node-2").CoreV1().Pods("default").Patch(ctx, "on1", types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	want := `pods "on1" is forbidden: node "node-2" can only update pod status for pods with spec.nodeName set to itself`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("node-2 writing node-1's pod status: %v, want %q", err, want)
	}
}

// A Node a user creates with kwok's annotation is simulated too, keeping
// the capacity it states; a Node without it is left alone and gets no
// pods.
func TestSimulatedNodeByAnnotation(t *testing.T) {
	o := testOptions(t)
	o.SimulatedNodes = SimulatedNodesOptions{Enabled: true}
	_, admin := startWith(t, o)
	c := kubernetes.NewForConfigOrDie(admin)
	ctx := t.Context()
	annotated := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker", Labels: map[string]string{"pool": "sim"},
		Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}},
		Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"),
			corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("10")}}}
	plain := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "real", Labels: map[string]string{"pool": "real"}}}
	for _, n := range []*corev1.Node{annotated, plain} {
		if _, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, 10*time.Second, "worker ready and untainted", func() bool {
		n, err := c.CoreV1().Nodes().Get(ctx, "worker", metav1.GetOptions{})
		return err == nil && len(n.Spec.Taints) == 0 && len(n.Status.Conditions) == 4
	})
	n, _ := c.CoreV1().Nodes().Get(ctx, "worker", metav1.GetOptions{})
	if cpu := n.Status.Allocatable.Cpu().String(); cpu != "4" {
		t.Errorf("worker's allocatable cpu = %s, want its own 4", cpu)
	}
	for i, pool := range []string{"sim", "real"} {
		p := simplePod([]string{"to-sim", "to-real"}[i])
		p.Spec.NodeSelector = map[string]string{"pool": pool}
		if _, err := c.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, 10*time.Second, "the pod selecting the simulated node to run there", func() bool {
		p, err := c.CoreV1().Pods("default").Get(ctx, "to-sim", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName == "worker" && p.Status.Phase == corev1.PodRunning
	})
	want := "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
	waitUntil(t, 10*time.Second, "the pod selecting the other node to be unschedulable", func() bool {
		p, err := c.CoreV1().Pods("default").Get(ctx, "to-real", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName == "" && len(p.Status.Conditions) == 1 && p.Status.Conditions[0].Message == want
	})
	if n, _ := c.CoreV1().Nodes().Get(ctx, "real", metav1.GetOptions{}); len(n.Status.Conditions) != 0 {
		t.Errorf("the node without the annotation got conditions %v", n.Status.Conditions)
	}
	// its not-ready taint (TaintNodesByCondition's, at its create) is the
	// node lifecycle controller's to remove, since the node has no
	// conditions yet, as upstream's
	waitUntil(t, 10*time.Second, "the node without the annotation untainted by the node lifecycle controller", func() bool {
		n, err := c.CoreV1().Nodes().Get(ctx, "real", metav1.GetOptions{})
		return err == nil && len(n.Spec.Taints) == 0
	})
}

// Many pods at once: every one runs, spread evenly by the least-allocated
// score, each with its own IP.
func TestSimulatedManyPods(t *testing.T) {
	o := testOptions(t)
	o.SimulatedNodes = SimulatedNodesOptions{Enabled: true, Nodes: 10}
	_, admin := startWith(t, o)
	c := kubernetes.NewForConfigOrDie(admin)
	ctx := t.Context()
	waitUntil(t, 10*time.Second, "10 ready, untainted nodes", func() bool {
		nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil || len(nodes.Items) != 10 {
			return false
		}
		for _, n := range nodes.Items {
			if len(n.Spec.Taints) != 0 {
				return false
			}
		}
		return true
	})
	const pods = 200
	errs := make(chan error, pods)
	for i := range pods {
		go func() {
			_, err := c.CoreV1().Pods("default").Create(ctx, simplePod(fmt.Sprintf("p%d", i)), metav1.CreateOptions{})
			errs <- err
		}()
	}
	for range pods {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var list *corev1.PodList
	waitUntil(t, 60*time.Second, "every pod to run", func() bool {
		l, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		list = l
		for _, p := range l.Items {
			if p.Status.Phase != corev1.PodRunning {
				return false
			}
		}
		return len(l.Items) == pods
	})
	perNode, ips := map[string]int{}, map[string]bool{}
	for _, p := range list.Items {
		perNode[p.Spec.NodeName]++
		if ips[p.Status.PodIP] {
			t.Errorf("pod IP %s given twice", p.Status.PodIP)
		}
		ips[p.Status.PodIP] = true
	}
	for node, n := range perNode {
		if n < pods/10-5 || n > pods/10+5 {
			t.Errorf("%s runs %d pods, want about %d (spread: %v)", node, n, pods/10, perNode)
		}
	}
}
