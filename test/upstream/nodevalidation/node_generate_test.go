package nodevalidation

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// nodeWrites are the generated Node creates, updates and status writes.
const nodeWrites = 4000

func TestGeneratedNodes(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	g := &generator{rng: rand.New(rand.NewSource(1))}
	for i := range nodeWrites {
		g.write()
		w := write{Name: fmt.Sprintf("Node #%d create", i), Defaulted: true}
		switch g.rng.Intn(3) {
		case 0:
			w.Obj = g.node()
		case 1:
			w.Old = g.storedNode()
			w.Name, w.Obj, w.Defaulted = fmt.Sprintf("Node #%d update", i), g.changedNode(w.Old.(*corev1.Node)), true
		default:
			w.Old, w.Status = g.storedNode(), true
			w.Name, w.Obj, w.Defaulted = fmt.Sprintf("Node #%d status write", i), g.changedNode(w.Old.(*corev1.Node)), true
		}
		compare(t, cat, w, &c)
	}
	t.Log(c.String())
	if c.Refused < nodeWrites/4 || c.Accepted < nodeWrites/8 {
		t.Errorf("generated writes are too one-sided: %s", c.String())
	}
}

// generator makes objects whose fields are each valid but for one in odds
// (a write draws odds of 4 or 40, so that some writes are all valid).
type generator struct {
	rng  *rand.Rand
	odds int
}

// write starts a write: it draws the odds of its invalid fields.
func (g *generator) write() { g.odds = []int{4, 40}[g.rng.Intn(2)] }

func (g *generator) pick(options ...string) string { return options[g.rng.Intn(len(options))] }

func (g *generator) chance(n int) bool { return g.rng.Intn(n) == 0 }

// bad is whether a field is invalid this time.
func (g *generator) bad() bool { return g.rng.Intn(max(g.odds, 2)) == 0 }

// mostly returns valid but for one time in the odds, else any of the others.
func (g *generator) mostly(valid string, others ...string) string {
	if !g.bad() {
		return valid
	}
	return g.pick(others...)
}

func (g *generator) meta(name string, names ...string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: g.mostly(name, names...)}
	if g.chance(12) {
		m.GenerateName = g.mostly("gen-", "Bad_", "a/")
	}
	if g.chance(8) {
		m.Labels = map[string]string{g.mostly("app", "bad key!"): g.mostly("web", "bad value!")}
	}
	if g.chance(15) {
		m.Finalizers = []string{g.mostly("example.com/x", "cleanup", "kubernetes")}
	}
	if g.bad() {
		m.Generation = int64(g.rng.Intn(4) - 1)
	}
	if g.bad() && g.chance(4) {
		m.Namespace = "default"
	}
	return m
}

var (
	podCIDRs     = []string{"10.244.1.0/24", "fd00:10:244:1::/64", "10.244.2.0/24", "10.244.1.1/24", "010.244.1.0/24", "nope", "10.0.0.0/33", "FD00::/64", "::ffff:10.0.0.0/120", ""}
	taintKeys    = []string{"node.kubernetes.io/not-ready", "dedicated", "example.com/gpu", "", "bad key!", "a/b/c", strings.Repeat("k", 64)}
	taintValues  = []string{"", "true", "gpu", "bad value!", strings.Repeat("v", 64)}
	taintEffects = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute, "", "NoScheduleNoAdmit", "Bogus"}
	quantities   = []string{"4", "0", "1.5", "500m", "-1", "16Gi", "110", "2.5Gi"}
	resourceKeys = []corev1.ResourceName{"cpu", "memory", "pods", "ephemeral-storage", "hugepages-2Mi", "example.com/gpu", "services", "requests.cpu", "bad name!"}
	featureNames = []string{"GuaranteedQoSPodCPUResize", "MyFeature/sub", "NodeFeature", "lower", "A", "Bad Name", "X/1", strings.Repeat("F", 254), "Z"}
	addressTypes = []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeHostName, corev1.NodeExternalIP, "Odd"}
)

func (g *generator) taint() corev1.Taint {
	t := corev1.Taint{Key: g.mostly(g.pick("dedicated", "example.com/gpu", "node.kubernetes.io/not-ready"), taintKeys...),
		Value: g.mostly(g.pick("", "gpu", "true"), taintValues...), Effect: taintEffects[g.rng.Intn(3)]}
	if g.bad() {
		t.Effect = taintEffects[g.rng.Intn(len(taintEffects))]
	}
	if g.chance(5) {
		t.TimeAdded = ptr.To(metav1.Date(2024, 1, 2, 3, 4, 5, 0, metav1.Now().UTC().Location()))
	}
	return t
}

func (g *generator) taints() []corev1.Taint {
	var out []corev1.Taint
	for range g.rng.Intn(4) {
		if len(out) > 0 && g.bad() {
			out = append(out, out[g.rng.Intn(len(out))])
			continue
		}
		out = append(out, g.taint())
	}
	return out
}

func (g *generator) annotations() map[string]string {
	a := map[string]string{}
	if g.chance(6) {
		if g.bad() {
			a["scheduler.alpha.kubernetes.io/taints"] = g.pick("not json", `{"key":1}`, `[{"key":"a","effect":"Bogus"}]`, "[]")
		} else {
			raw, _ := json.Marshal(g.taints())
			a["scheduler.alpha.kubernetes.io/taints"] = string(raw)
		}
	}
	if g.chance(6) {
		a["scheduler.alpha.kubernetes.io/preferAvoidPods"] = g.mostly(`{"preferAvoidPods":[]}`, "not json",
			`{"preferAvoidPods":[{"podSignature":{}}]}`,
			`{"preferAvoidPods":[{"podSignature":{"podController":{"apiVersion":"v1","kind":"ReplicationController","name":"rc","uid":"u","controller":true}}}]}`,
			`{"preferAvoidPods":[{"podSignature":{"podController":{"apiVersion":"v1","kind":"ReplicationController","name":"rc","uid":"u","controller":false}}},{"podSignature":{}}]}`)
	}
	if g.chance(8) {
		a["note"] = "x"
	}
	if len(a) == 0 {
		return nil
	}
	return a
}

func (g *generator) resources() corev1.ResourceList {
	if g.chance(3) {
		return nil
	}
	out := corev1.ResourceList{}
	for range 1 + g.rng.Intn(4) {
		name := resourceKeys[g.rng.Intn(4)]
		if g.bad() {
			name = resourceKeys[g.rng.Intn(len(resourceKeys))]
		}
		q := g.pick("4", "16Gi", "110", "0")
		if g.bad() {
			q = g.pick(quantities...)
		}
		out[name] = resource.MustParse(q)
	}
	return out
}

func (g *generator) configSource(status bool) *corev1.NodeConfigSource {
	if g.bad() {
		return &corev1.NodeConfigSource{}
	}
	cm := &corev1.ConfigMapNodeConfigSource{Namespace: g.mostly("kube-system", "", "Bad_NS"), Name: g.mostly("kubelet", "", "Bad_Name"),
		KubeletConfigKey: g.mostly("kubelet", "", "bad key!")}
	if status != g.bad() {
		cm.UID, cm.ResourceVersion = "uid-1", "12"
	}
	return &corev1.NodeConfigSource{ConfigMap: cm}
}

func (g *generator) nodeSpec() corev1.NodeSpec {
	var s corev1.NodeSpec
	switch g.rng.Intn(5) {
	case 0:
		s.PodCIDR = g.mostly("10.244.1.0/24", podCIDRs...)
	case 1:
		for range 1 + g.rng.Intn(3) {
			s.PodCIDRs = append(s.PodCIDRs, g.mostly(g.pick("10.244.1.0/24", "fd00:10:244:1::/64"), podCIDRs...))
		}
	}
	if g.chance(2) {
		s.ProviderID = g.pick("kind://docker/kind/n1", "aws:///us-east-1a/i-1", "")
	}
	s.Unschedulable = g.chance(5)
	s.Taints = g.taints()
	if g.chance(8) {
		s.ConfigSource = g.configSource(false)
	}
	if g.chance(10) {
		s.DoNotUseExternalID = g.pick("ext-1", "ext-2")
	}
	if !g.bad() && s.PodCIDR == "" && len(s.PodCIDRs) > 1 {
		s.PodCIDRs = []string{"10.244.1.0/24", "fd00:10:244:1::/64"}
	}
	if g.chance(10) {
		s.PodPreemptionPolicy = &corev1.NodePodPreemptionPolicy{DisableResizePreemption: []string{g.pick("a", "example.com/b", "bad key!")}}
	}
	return s
}

func (g *generator) nodeStatus() corev1.NodeStatus {
	var st corev1.NodeStatus
	st.Capacity, st.Allocatable = g.resources(), g.resources()
	for range g.rng.Intn(4) {
		a := corev1.NodeAddress{Type: addressTypes[g.rng.Intn(len(addressTypes))], Address: g.pick("10.0.0.1", "n1", "10.0.0.2", "not an ip")}
		if len(st.Addresses) > 0 && g.bad() {
			a = st.Addresses[0]
		}
		st.Addresses = append(st.Addresses, a)
	}
	if g.chance(4) {
		st.DaemonEndpoints.KubeletEndpoint.Port = int32(g.pick2(10250, 0, -1, 70000))
	}
	if g.chance(4) {
		st.NodeInfo = corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", OperatingSystem: "linux", Architecture: "amd64"}
		if g.chance(2) {
			st.NodeInfo.Swap = &corev1.NodeSwapStatus{Capacity: ptr.To(int64(1024))}
			if g.bad() {
				st.NodeInfo.Swap.Capacity = ptr.To(int64(g.pick2(0, -5)))
			}
		}
		if g.chance(3) {
			st.NodeInfo.RunningInUserNamespace = ptr.To(g.chance(2))
		}
	}
	if g.chance(4) {
		st.DeclaredFeatures = []string{}
		for range g.rng.Intn(4) {
			st.DeclaredFeatures = append(st.DeclaredFeatures, g.mostly(g.pick(featureNames[:3]...), featureNames...))
		}
		if !g.bad() {
			sortStrings(st.DeclaredFeatures)
		}
	}
	if g.chance(6) {
		st.Config = &corev1.NodeConfigStatus{Assigned: g.configSource(true)}
		if g.chance(2) {
			st.Config.Active, st.Config.Error = g.configSource(true), "boom"
		}
		if g.chance(3) {
			st.Config.LastKnownGood = g.configSource(true)
		}
	}
	if g.chance(5) {
		st.RuntimeHandlers = []corev1.NodeRuntimeHandler{{Name: g.pick("", "runc", "Bad_Name"),
			Features: &corev1.NodeRuntimeHandlerFeatures{RecursiveReadOnlyMounts: ptr.To(true), UserNamespaces: ptr.To(g.chance(2))}}}
	}
	if g.chance(5) {
		st.Features = &corev1.NodeFeatures{SupplementalGroupsPolicy: ptr.To(g.chance(2))}
	}
	if g.chance(4) {
		st.Conditions = []corev1.NodeCondition{{Type: corev1.NodeConditionType(g.pick("Ready", "", "Odd")), Status: corev1.ConditionStatus(g.pick("True", "Maybe"))}}
	}
	if g.chance(6) {
		st.Phase = corev1.NodePhase(g.pick("Running", "Odd"))
	}
	return st
}

func (g *generator) pick2(options ...int) int { return options[g.rng.Intn(len(options))] }

func sortStrings(s []string) {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
}

func (g *generator) node() *corev1.Node {
	n := &corev1.Node{ObjectMeta: g.meta("n1", "", "Bad_Name", "a/b", strings.Repeat("n", 254))}
	n.Annotations = g.annotations()
	n.Spec = g.nodeSpec()
	if g.chance(3) {
		n.Status = g.nodeStatus()
	}
	return n
}

// storedNode is a Node as stored: defaulted, with a valid name and a
// resourceVersion, and otherwise whatever was allowed when it was written
// (a configSource or podPreemptionPolicy from before their removal or
// under their gate included).
func (g *generator) storedNode() *corev1.Node {
	n := g.node()
	n.Name, n.GenerateName, n.ResourceVersion, n.Generation, n.Finalizers, n.Namespace = "n1", "", "7", 0, nil, ""
	n.Labels = nil
	if g.chance(2) {
		n.Status = g.nodeStatus()
	}
	legacyscheme.Scheme.Default(n)
	asServed(n)
	return n
}

// changedNode is a write over old: some fields kept, some changed.
func (g *generator) changedNode(old *corev1.Node) *corev1.Node {
	n := old.DeepCopy()
	if g.chance(4) {
		n.Labels = map[string]string{"tier": g.mostly("gold", "bad value!")}
	}
	if g.chance(5) {
		n.Annotations = g.annotations()
	}
	if g.chance(15) {
		n.ResourceVersion = ""
	}
	if g.chance(20) {
		n.Name = "renamed"
	}
	f := g.nodeSpec()
	switch g.rng.Intn(8) {
	case 0:
		n.Spec = f
	case 1:
		n.Spec.PodCIDR, n.Spec.PodCIDRs = f.PodCIDR, f.PodCIDRs
	case 2:
		n.Spec.ProviderID = f.ProviderID
	case 3:
		n.Spec.Taints = f.Taints
	case 4:
		n.Spec.ConfigSource, n.Spec.DoNotUseExternalID = f.ConfigSource, f.DoNotUseExternalID
	case 5:
		n.Spec.PodPreemptionPolicy = f.PodPreemptionPolicy
	}
	if g.chance(2) {
		n.Status = g.nodeStatus()
	}
	return n
}
