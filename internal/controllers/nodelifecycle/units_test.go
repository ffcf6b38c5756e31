package nodelifecycle

import (
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestComputeZoneState(t *testing.T) {
	c := &Controller{cfg: Config{UnhealthyZoneThreshold: DefaultUnhealthyZoneThreshold}}
	ready := &corev1.NodeCondition{Status: corev1.ConditionTrue}
	notReady := &corev1.NodeCondition{Status: corev1.ConditionFalse}
	unknown := &corev1.NodeCondition{Status: corev1.ConditionUnknown}
	for _, tc := range []struct {
		conds     []*corev1.NodeCondition
		unhealthy int
		want      zoneState
	}{
		{[]*corev1.NodeCondition{ready, ready}, 0, stateNormal},
		{[]*corev1.NodeCondition{notReady, nil}, 2, stateFullDisruption},
		{[]*corev1.NodeCondition{ready, notReady, unknown}, 2, stateNormal}, // two not Ready are never partial
		{[]*corev1.NodeCondition{ready, ready, notReady, unknown, nil}, 3, statePartialDisruption},
		{[]*corev1.NodeCondition{ready, ready, ready, notReady, unknown, nil}, 3, stateNormal}, // 50% < 55%
	} {
		unhealthy, got := c.computeZoneState(tc.conds)
		if unhealthy != tc.unhealthy || got != tc.want {
			t.Errorf("computeZoneState(%d conditions) = %d, %s; want %d, %s", len(tc.conds), unhealthy, got, tc.unhealthy, tc.want)
		}
	}
}

func TestZoneRate(t *testing.T) {
	c := &Controller{cfg: Config{EvictionRate: 0.1, SecondaryEvictionRate: 0.01, LargeClusterThreshold: 50}}
	for _, tc := range []struct {
		state zoneState
		size  int
		want  float32
	}{
		{stateNormal, 3, 0.1}, {stateFullDisruption, 3, 0.1}, {statePartialDisruption, 50, 0}, {statePartialDisruption, 51, 0.01},
	} {
		if got := c.zoneRate(tc.state, tc.size); got != tc.want {
			t.Errorf("zoneRate(%s, %d) = %v, want %v", tc.state, tc.size, got, tc.want)
		}
	}
}

// TestTaintQueue: nodes are tried earliest first at the limiter's rate; a
// failed one is tried again after its delay; a tainted one stays known
// (not queued again) until removed.
func TestTaintQueue(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	q := newTaintQueue(1, clk) // one a second, burst one
	var tried []string
	fail := map[string]bool{"b": true}
	taint := func(n timedNode) (bool, time.Duration) {
		tried = append(tried, n.name)
		return !fail[n.name], 3 * time.Second
	}
	for _, name := range []string{"a", "b", "c"} {
		if !q.add(name, "uid-"+name) {
			t.Fatalf("add(%s) = false for a new node", name)
		}
		clk.Step(time.Millisecond)
	}
	if q.add("a", "uid-a") {
		t.Error("add(a) again = true, want false")
	}
	q.try(taint)
	if got := strings.Join(tried, ","); got != "a" {
		t.Fatalf("first try (one token) tried %q, want a", got)
	}
	clk.Step(time.Second)
	q.try(taint) // b fails, is put back 3s later; no token left for c
	clk.Step(time.Second)
	q.try(taint)
	if got := strings.Join(tried, ","); got != "a,b,c" {
		t.Fatalf("tried %q, want a,b,c", got)
	}
	fail["b"] = false
	clk.Step(time.Second)
	q.try(taint)
	if got := strings.Join(tried, ","); got != "a,b,c" {
		t.Fatalf("b tried again before its delay: %q", got)
	}
	clk.Step(2 * time.Second)
	q.try(taint)
	if got := strings.Join(tried, ","); got != "a,b,c,b" {
		t.Fatalf("tried %q, want a,b,c,b", got)
	}
	if q.add("a", "uid-a") {
		t.Error("a tainted node was queued again before remove")
	}
	if !q.remove("a") || !q.add("a", "uid-a") {
		t.Error("a removed node cannot be queued again")
	}
	q.swapLimiter(0)
	clk.Step(time.Minute)
	q.try(taint)
	if got := strings.Join(tried, ","); got != "a,b,c,b" {
		t.Errorf("a queue at rate 0 tried: %q", got)
	}
}

// TestObserve: the probe time moves with a new heartbeat or a renewed
// lease, and only then; a node that never posted is dated at its
// creation and has the startup grace period.
func TestObserve(t *testing.T) {
	t0 := time.Unix(10000, 0)
	created := metav1.NewTime(t0.Add(-time.Hour))
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", CreationTimestamp: created}}
	h, grace, observed := observe(nil, node.DeepCopy(), nil, t0, time.Minute, 50*time.Second)
	if grace != time.Minute || observed.Status != corev1.ConditionUnknown || !h.probe.Equal(created.Time) {
		t.Fatalf("never posted: grace %v, observed %s, probe %v; want 1m, Unknown, the creation time", grace, observed.Status, h.probe)
	}
	lease := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: t0}}}
	h, _, _ = observe(h, node.DeepCopy(), lease, t0.Add(time.Second), time.Minute, 50*time.Second)
	if !h.probe.Equal(t0.Add(time.Second)) {
		t.Errorf("a first lease: probe %v, want now", h.probe)
	}
	h, _, _ = observe(h, node.DeepCopy(), lease, t0.Add(2*time.Second), time.Minute, 50*time.Second)
	if !h.probe.Equal(t0.Add(time.Second)) {
		t.Errorf("the same lease again moved the probe to %v", h.probe)
	}
	beat := metav1.NewTime(t0)
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: beat, LastTransitionTime: beat}}
	h, grace, _ = observe(h, node.DeepCopy(), lease, t0.Add(3*time.Second), time.Minute, 50*time.Second)
	if grace != 50*time.Second || !h.probe.Equal(t0.Add(3*time.Second)) {
		t.Errorf("a first Ready condition: grace %v, probe %v; want 50s, now", grace, h.probe)
	}
	// As upstream, the health saved on a status change forgets the lease,
	// so the next pass takes the same lease for a renewed one, once.
	h, _, _ = observe(h, node.DeepCopy(), lease, t0.Add(4*time.Second), time.Minute, 50*time.Second)
	if !h.probe.Equal(t0.Add(4 * time.Second)) {
		t.Errorf("the lease seen again after a status change: probe %v, want now", h.probe)
	}
	h, _, _ = observe(h, node.DeepCopy(), lease, t0.Add(5*time.Second), time.Minute, 50*time.Second)
	if !h.probe.Equal(t0.Add(4 * time.Second)) {
		t.Errorf("the same heartbeat and lease again moved the probe to %v", h.probe)
	}
	node.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(t0.Add(5 * time.Second))
	h, _, _ = observe(h, node.DeepCopy(), lease, t0.Add(6*time.Second), time.Minute, 50*time.Second)
	if !h.probe.Equal(t0.Add(6*time.Second)) || !h.readyTransition.Equal(t0.Add(3*time.Second)) {
		t.Errorf("a new heartbeat: probe %v, ready transition %v; want now, unchanged", h.probe, h.readyTransition)
	}
}

func TestNoScheduleTaints(t *testing.T) {
	node := &corev1.Node{Spec: corev1.NodeSpec{Unschedulable: true}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}, {Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionTrue},
	}}}
	var got []string
	for _, t := range noScheduleTaints(node) {
		got = append(got, t.Key+":"+string(t.Effect))
	}
	want := "node.kubernetes.io/unreachable:NoSchedule,node.kubernetes.io/memory-pressure:NoSchedule," +
		"node.kubernetes.io/network-unavailable:NoSchedule,node.kubernetes.io/unschedulable:NoSchedule"
	if strings.Join(got, ",") != want {
		t.Errorf("noScheduleTaints = %v, want %s", got, want)
	}
	has := []corev1.Taint{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule}, {Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}}
	add, remove := taintDiff(noScheduleTaints(node), has)
	if len(add) != 3 || len(remove) != 1 || remove[0].Key != corev1.TaintNodeNotReady {
		t.Errorf("taintDiff: add %v, remove %v", add, remove)
	}
}

// TestZoneQueueOutlivesItsState: a zone that counts no node in a pass
// loses its state, not its queue of nodes waiting for a NoExecute taint
// (the taint pass still works through it); a new state brings a new queue.
func TestZoneQueueOutlivesItsState(t *testing.T) {
	c := &Controller{cfg: Config{EvictionRate: 0.1}, clock: clocktesting.NewFakeClock(time.Unix(1000, 0)),
		zoneStates: map[string]zoneState{}, tainters: map[string]*taintQueue{}, health: map[string]*nodeHealth{}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "solo", Labels: map[string]string{corev1.LabelTopologyZone: "z1"}}}
	c.addZone(node)
	q := c.zoneTainter(node)
	if q == nil || !q.add("solo", "uid") {
		t.Fatal("no queue for a new zone")
	}
	c.handleDisruption(t.Context(), map[string][]*corev1.NodeCondition{}, nil)
	if _, ok := c.zoneStates[zoneOf(node)]; ok {
		t.Error("a zone counting no node kept its state")
	}
	if c.zoneTainter(node) != q {
		t.Fatal("a zone counting no node lost its queue")
	}
	c.addZone(node)
	if got := c.zoneTainter(node); got == q || got == nil {
		t.Error("a zone given a state again kept its old queue")
	}
}

// TestTaintQueueAtRateZero: kube-controller-manager's --node-eviction-rate=0
// still taints one node per zone queue, the bucket's first token.
func TestTaintQueueAtRateZero(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	q := newTaintQueue(0, clk)
	q.add("a", "uid-a")
	q.add("b", "uid-b")
	var tried []string
	for range 3 {
		q.try(func(n timedNode) (bool, time.Duration) { tried = append(tried, n.name); return true, 0 })
		clk.Step(time.Minute)
	}
	if got := strings.Join(tried, ","); got != "a" {
		t.Errorf("at rate 0 the queue tried %q, want a alone", got)
	}
}
