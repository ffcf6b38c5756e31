package podgc

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/controller/podgc"

	ours "github.com/admitd/admitd/internal/controllers/podgc"
	"github.com/admitd/admitd/internal/registry"
)

const cases = 600

var (
	t0     = time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)
	phases = []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown, ""}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func randomPod(r *rand.Rand, i int) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: pick(r, []string{"a", "b"}), Name: fmt.Sprintf("p%d", r.IntN(40)*100+i),
		UID: types.UID(fmt.Sprintf("uid-%d", i)), Generation: int64(r.IntN(3)),
		CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(r.IntN(4)) * time.Second))},
		Spec:   corev1.PodSpec{NodeName: pick(r, []string{"", "n0", "n1", "n2", "n3", "n4"})},
		Status: corev1.PodStatus{Phase: pick(r, phases), ObservedGeneration: int64(r.IntN(2))}}
	if r.IntN(4) == 0 {
		p.Status.Reason = pick(r, []string{"Evicted", "OOMKilled"})
	}
	if r.IntN(3) == 0 {
		p.DeletionTimestamp = &metav1.Time{Time: t0.Add(time.Minute)}
	}
	if r.IntN(2) == 0 {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)})
	}
	if r.IntN(4) == 0 {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: pick(r, []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse}),
			Reason: "EvictionByEvictionAPI", ObservedGeneration: int64(r.IntN(2)), LastTransitionTime: metav1.NewTime(t0)})
	}
	return p
}

func randomNode(r *rand.Rand, name string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if r.IntN(4) > 0 {
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: pick(r, []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown})}}
	}
	if r.IntN(2) == 0 {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: pick(r, []string{corev1.TaintNodeOutOfService, corev1.TaintNodeNotReady}), Effect: corev1.TaintEffectNoExecute})
	}
	return n
}

type scenario struct {
	pods      []*corev1.Pod
	nodes     []*corev1.Node
	threshold int
}

func randomScenario(r *rand.Rand) scenario {
	var s scenario
	seen := map[string]bool{}
	for i := range r.IntN(14) {
		p := randomPod(r, i)
		if !seen[p.Namespace+"/"+p.Name] {
			seen[p.Namespace+"/"+p.Name] = true
			s.pods = append(s.pods, p)
		}
	}
	for _, name := range []string{"n0", "n1", "n2", "n3"} {
		if r.IntN(3) > 0 {
			s.nodes = append(s.nodes, randomNode(r, name))
		}
	}
	s.threshold = r.IntN(6) - 1
	return s
}

func (s scenario) objects() []runtime.Object {
	var objs []runtime.Object
	for _, p := range s.pods {
		objs = append(objs, p.DeepCopy())
	}
	for _, n := range s.nodes {
		objs = append(objs, n.DeepCopy())
	}
	return objs
}

var transitionTime = regexp.MustCompile(`"lastTransitionTime":"[^"]*"`)

// describe is a client action in a line, the new conditions' transition
// times (now, on either side) left out.
func describe(a clienttesting.Action) string {
	res := a.GetResource().Resource
	if a.GetSubresource() != "" {
		res += "/" + a.GetSubresource()
	}
	switch a := a.(type) {
	case clienttesting.DeleteAction:
		opts, _ := json.Marshal(a.GetDeleteOptions())
		return fmt.Sprintf("delete %s %s/%s %s", res, a.GetNamespace(), a.GetName(), opts)
	case clienttesting.PatchAction:
		patch := transitionTime.ReplaceAllStringFunc(string(a.GetPatch()), func(m string) string {
			if strings.Contains(m, t0.Format(time.RFC3339)) {
				return m
			}
			return `"lastTransitionTime":"<now>"`
		})
		return fmt.Sprintf("patch %s %s/%s %s %s", res, a.GetNamespace(), a.GetName(), a.GetPatchType(), patch)
	case clienttesting.GetAction:
		return fmt.Sprintf("get %s %s/%s", res, a.GetNamespace(), a.GetName())
	}
	return a.GetVerb() + " " + res
}

func sortedActions(c *fake.Clientset) []string {
	var out []string
	for _, a := range c.Actions() {
		out = append(out, describe(a))
	}
	slices.Sort(out)
	return out
}

// upstreamPass runs one pass of upstream's collector (no quarantine) over
// the scenario and returns what it asked of the server.
func upstreamPass(t *testing.T, s scenario) []string {
	client := fake.NewClientset(s.objects()...)
	factory := informers.NewSharedInformerFactory(client, 0)
	pods, nodes := factory.Core().V1().Pods(), factory.Core().V1().Nodes()
	gcc := podgc.NewPodGCInternal(t.Context(), client, pods, nodes, s.threshold, time.Hour, 0)
	// The listers read their informers' stores, filled here: no informer
	// runs, so nothing is left to stop after the pass.
	for _, p := range s.pods {
		if err := pods.Informer().GetIndexer().Add(p.DeepCopy()); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range s.nodes {
		if err := nodes.Informer().GetIndexer().Add(n.DeepCopy()); err != nil {
			t.Fatal(err)
		}
	}
	upstreamGC(gcc, t.Context())
	return sortedActions(client)
}

func ourPass(t *testing.T, cat *registry.Catalogue, s scenario) []string {
	client := fake.NewClientset(s.objects()...)
	c, err := ours.New(ours.Config{Catalogue: cat, Client: client, TerminatedPodThreshold: s.threshold})
	if err != nil {
		t.Fatal(err)
	}
	var pods []*corev1.Pod
	for _, p := range s.pods {
		pods = append(pods, p.DeepCopy())
	}
	var nodes []*corev1.Node
	for _, n := range s.nodes {
		nodes = append(nodes, n.DeepCopy())
	}
	c.Collect(t.Context(), pods, nodes)
	return sortedActions(client)
}

// One pass over 600 random sets of pods (phases, evicted, terminating,
// bound to listed, missing or no nodes, conditions) and nodes (ready or
// not, out-of-service or other taints), with thresholds from -1 to 4:
// the same status patches (bytes, transition times aside), deletes
// (options) and node reads as upstream's.
func TestPassMatchesUpstream(t *testing.T) {
	cat := registry.NewCatalogue()
	r := rand.New(rand.NewPCG(26, 1))
	mismatches := 0
	for i := range cases {
		s := randomScenario(r)
		want, got := upstreamPass(t, s), ourPass(t, cat, s)
		if !slices.Equal(got, want) {
			mismatches++
			if mismatches <= 5 {
				t.Errorf("case %d (threshold %d, %d pods, %d nodes):\n--- ours\n%s\n--- upstream\n%s", i, s.threshold, len(s.pods), len(s.nodes),
					strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}
	if mismatches > 0 {
		t.Errorf("%d of %d passes differ", mismatches, cases)
	}
}

// The order pods go in: evicted first, then by creation time, then name.
func TestOrderMatchesUpstream(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 2))
	for range 20000 {
		pods := []*corev1.Pod{randomPod(r, 0), randomPod(r, 1)}
		want := upstreamLess(pods, 0, 1)
		if got := ours.EvictedThenOldest(pods[0], pods[1]) < 0; got != want {
			t.Fatalf("EvictedThenOldest(%s %s %v, %s %s %v) < 0 = %t, upstream's Less %t", pods[0].Name, pods[0].Status.Reason, pods[0].CreationTimestamp,
				pods[1].Name, pods[1].Status.Reason, pods[1].CreationTimestamp, got, want)
		}
	}
}
