// Package daemonset compares admitd's DaemonSet controller
// (internal/controllers/daemonset) with upstream's pkg/controller/daemon
// on the same random nodes and DaemonSets: which nodes get a pod, the
// revision hash and data, the pods' template and node affinity.
package daemonset

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/controller/daemon"
	"k8s.io/kubernetes/pkg/controller/daemon/util"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/controllers/daemonset"
)

const cases = 4000

var (
	labelKeys  = []string{"zone", "role", "disk", "kubernetes.io/hostname"}
	labelVals  = []string{"a", "b", "ssd", "1", "7", "node-1"}
	taintKeys  = []string{"dedicated", corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable, corev1.TaintNodeDiskPressure, corev1.TaintNodeMemoryPressure, corev1.TaintNodePIDPressure, corev1.TaintNodeUnschedulable, corev1.TaintNodeNetworkUnavailable}
	effects    = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute, corev1.TaintEffectPreferNoSchedule}
	selectorOp = []corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func randomNode(r *rand.Rand) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", r.IntN(3)), Labels: map[string]string{}}}
	for range r.IntN(3) {
		n.Labels[pick(r, labelKeys)] = pick(r, labelVals)
	}
	for range r.IntN(3) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: pick(r, taintKeys), Value: pick(r, []string{"", "x"}), Effect: pick(r, effects)})
	}
	return n
}

func randomRequirement(r *rand.Rand, key string) corev1.NodeSelectorRequirement {
	req := corev1.NodeSelectorRequirement{Key: key, Operator: pick(r, selectorOp)}
	switch req.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		req.Values = []string{pick(r, labelVals), pick(r, labelVals)}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		req.Values = []string{pick(r, []string{"0", "5", "x"})}
	}
	return req
}

func randomTemplate(r *rand.Rand) corev1.PodTemplateSpec {
	t := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: pick(r, []string{"nginx", "nginx:1.27"})}},
			HostNetwork: r.IntN(3) == 0}}
	if r.IntN(4) == 0 {
		t.Spec.NodeName = fmt.Sprintf("node-%d", r.IntN(3))
	}
	if r.IntN(3) == 0 {
		t.Spec.NodeSelector = map[string]string{pick(r, labelKeys): pick(r, labelVals)}
	}
	if r.IntN(2) == 0 {
		var terms []corev1.NodeSelectorTerm
		for range 1 + r.IntN(2) {
			var term corev1.NodeSelectorTerm
			for range r.IntN(3) {
				term.MatchExpressions = append(term.MatchExpressions, randomRequirement(r, pick(r, labelKeys)))
			}
			if r.IntN(4) == 0 {
				req := randomRequirement(r, metav1.ObjectNameField)
				if req.Operator == corev1.NodeSelectorOpIn || req.Operator == corev1.NodeSelectorOpNotIn {
					req.Values = []string{fmt.Sprintf("node-%d", r.IntN(3))}
				}
				term.MatchFields = append(term.MatchFields, req)
			}
			terms = append(terms, term)
		}
		t.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
		if r.IntN(3) == 0 {
			t.Spec.Affinity.PodAntiAffinity = &corev1.PodAntiAffinity{}
		}
	} else if r.IntN(4) == 0 {
		t.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
	}
	for range r.IntN(4) {
		tol := corev1.Toleration{Key: pick(r, append([]string{""}, taintKeys...)), Operator: pick(r, []corev1.TolerationOperator{corev1.TolerationOpExists, corev1.TolerationOpEqual}),
			Effect: pick(r, append([]corev1.TaintEffect{""}, effects...))}
		if tol.Operator == corev1.TolerationOpEqual {
			tol.Value = pick(r, []string{"", "x"})
		}
		if r.IntN(4) == 0 {
			tol.TolerationSeconds = ptr.To[int64](30)
		}
		t.Spec.Tolerations = append(t.Spec.Tolerations, tol)
	}
	return t
}

func randomDaemonSet(r *rand.Rand) *appsv1.DaemonSet {
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default", UID: "u1"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}, Template: randomTemplate(r)}}
	if r.IntN(3) > 0 {
		ds.Annotations = map[string]string{appsv1.DeprecatedTemplateGeneration: pick(r, []string{"1", "4", "x"})}
	}
	if r.IntN(3) == 0 {
		ds.Status.CollisionCount = ptr.To(r.Int32N(3))
	}
	return ds
}

// Which nodes get a daemon pod (shouldRun) and keep one
// (shouldContinueRunning): upstream's NodeShouldRunDaemonPod and admitd's
// on random nodes (labels, taints of every effect, the daemon taints) and
// templates (nodeName, nodeSelector, node affinity with every operator
// and metadata.name fields, tolerations, host network).
func TestNodeShouldRunDaemonPodMatchesUpstream(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 26))
	var runs, keeps int
	for i := range cases {
		node, ds := randomNode(r), randomDaemonSet(r)
		wantRun, wantKeep := daemon.NodeShouldRunDaemonPod(klog.Background(), node, ds)
		gotRun, gotKeep := daemonset.NodeShouldRunDaemonPod(node, ds)
		if gotRun != wantRun || gotKeep != wantKeep {
			t.Errorf("case %d: NodeShouldRunDaemonPod = %v, %v; upstream's %v, %v\nnode %+v\ntemplate %+v", i, gotRun, gotKeep, wantRun, wantKeep, node, ds.Spec.Template.Spec)
		}
		if wantRun {
			runs++
		}
		if wantKeep {
			keeps++
		}
	}
	t.Logf("%d cases: shouldRun %d, shouldContinueRunning %d", cases, runs, keeps)
	// the generator must reach both answers often enough to mean anything
	if runs < cases/10 || runs > cases*9/10 || keeps <= runs {
		t.Errorf("shouldRun in %d of %d cases, shouldContinueRunning in %d: the generator is lopsided", runs, cases, keeps)
	}
}

// The revision of a DaemonSet: its hash (the revision's name and the
// pods' controller-revision-hash) is upstream's ComputeHash of the
// template and collision count, and its data is one upstream's Match
// recognises as the DaemonSet's (and does not for another template).
func TestRevisionMatchesUpstream(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 26))
	for i := range cases {
		ds, other := randomDaemonSet(r), randomDaemonSet(r)
		if want, got := controller.ComputeHash(&ds.Spec.Template, ds.Status.CollisionCount), daemonset.Hash(ds); got != want {
			t.Errorf("case %d: Hash = %s, upstream's %s", i, got, want)
		}
		patch, err := daemonset.Patch(ds)
		if err != nil {
			t.Fatal(err)
		}
		cr := &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: patch}}
		if ok, err := daemon.Match(ds, cr); err != nil || !ok {
			t.Errorf("case %d: upstream's Match of admitd's revision data = %v, %v, want true\n%s", i, ok, err, patch)
		}
		if !reflect.DeepEqual(ds.Spec.Template, other.Spec.Template) {
			if ok, _ := daemon.Match(other, cr); ok {
				t.Errorf("case %d: upstream's Match of another template's DaemonSet = true", i)
			}
		}
	}
}

// The pods' template (daemon tolerations added or updated, generation and
// hash labels) is upstream's CreatePodTemplate; their node affinity is
// upstream's ReplaceDaemonSetPodNodeNameNodeAffinity, and the node a pod
// is for upstream's GetTargetNodeName.
func TestPodTemplateMatchesUpstream(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 26))
	for i := range cases {
		ds := randomDaemonSet(r)
		hash := pick(r, []string{"", "5fcc7b44f7"})
		generation, err := util.GetTemplateGeneration(ds)
		if err != nil {
			generation = nil
		}
		want := util.CreatePodTemplate(ds.Spec.Template, generation, hash)
		got := daemonset.PodTemplate(ds, hash)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("case %d: PodTemplate\n%s\nupstream's\n%s", i, jsonOf(got), jsonOf(want))
		}
		node := fmt.Sprintf("node-%d", r.IntN(3))
		wantAffinity := util.ReplaceDaemonSetPodNodeNameNodeAffinity(ds.Spec.Template.Spec.Affinity.DeepCopy(), node)
		gotAffinity := daemonset.WithNodeAffinity(ds.Spec.Template.Spec.Affinity.DeepCopy(), node)
		if !reflect.DeepEqual(gotAffinity, wantAffinity) {
			t.Errorf("case %d: WithNodeAffinity\n%s\nupstream's\n%s", i, jsonOf(gotAffinity), jsonOf(wantAffinity))
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: ds.Spec.Template.Spec}
		if r.IntN(2) == 0 {
			pod.Spec.Affinity = gotAffinity
		}
		wantNode, wantErr := util.GetTargetNodeName(pod)
		gotNode, gotErr := daemonset.TargetNodeName(pod)
		if gotNode != wantNode || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("case %d: TargetNodeName = %q, %v; upstream's %q, %v", i, gotNode, gotErr, wantNode, wantErr)
		}
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
