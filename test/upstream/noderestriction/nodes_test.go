package noderestriction

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

var nodesGVR = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

// labelKeys are label keys of every class: node-restriction ones, the
// kubelet's own, other kubernetes.io and k8s.io ones, and others.
var labelKeys = []string{
	"node-restriction.kubernetes.io/a", "sub.node-restriction.kubernetes.io/a", "node-restriction.kubernetes.io",
	"kubernetes.io/hostname", "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
	"failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
	"beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type", "kubernetes.io/os", "kubernetes.io/arch",
	"beta.kubernetes.io/os", "beta.kubernetes.io/arch",
	"kubelet.kubernetes.io/a", "x.kubelet.kubernetes.io/a", "node.kubernetes.io/a", "x.node.kubernetes.io/a",
	"xnode.kubernetes.io/a", "node-role.kubernetes.io/master", "kubernetes.io/a", "other.kubernetes.io/a",
	"k8s.io/a", "other.k8s.io/a", "kubernetes.io/a/b", "kubernetes.io", "example.com/a", "plain", "",
}

func node(name string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// nodeWrites: creates and updates of each label, taints, config source
// and owner references, of the node itself and of another.
func nodeWrites() []named {
	var out []named
	base := map[string]string{"example.com/keep": "1", "kubernetes.io/keep": "1"}
	for _, k := range labelKeys {
		out = append(out, named{"create node with label " + k, admissiontest.Create(node("n1", map[string]string{k: "v"}))})
		old := node("n1", base)
		added := node("n1", map[string]string{k: "v", "example.com/keep": "1", "kubernetes.io/keep": "1"})
		out = append(out, named{"add label " + k, admissiontest.Update(added, old)})
		withOld := node("n1", map[string]string{k: "old"})
		out = append(out,
			named{"change label " + k, admissiontest.Update(node("n1", map[string]string{k: "new"}), withOld)},
			named{"remove label " + k, admissiontest.Update(node("n1", nil), withOld)},
			named{"keep label " + k, admissiontest.Update(node("n1", map[string]string{k: "old"}), withOld).Resource(nodesGVR, "status")},
		)
	}
	many := map[string]string{}
	for _, k := range labelKeys {
		many[k] = "v"
	}
	out = append(out, named{"create node with every label", admissiontest.Create(node("n1", many))},
		named{"remove every label", admissiontest.Update(node("n1", nil), node("n1", many))},
		named{"remove kubernetes.io/keep", admissiontest.Update(node("n1", nil), node("n1", base))})
	return append(out, nodeSpecWrites()...)
}

func nodeSpecWrites() []named {
	src := &corev1.NodeConfigSource{ConfigMap: &corev1.ConfigMapNodeConfigSource{Name: "c", Namespace: "ns", KubeletConfigKey: "k"}}
	other := &corev1.NodeConfigSource{ConfigMap: &corev1.ConfigMapNodeConfigSource{Name: "d", Namespace: "ns", KubeletConfigKey: "k"}}
	taint := []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
	with := func(name string, f func(*corev1.Node)) *corev1.Node {
		n := node(name, nil)
		f(n)
		return n
	}
	plain := node("n1", nil)
	var out []named
	for _, name := range []string{"n1", "n2"} {
		out = append(out,
			named{"create node " + name, admissiontest.Create(node(name, nil))},
			named{"create node with generateName " + name, admissiontest.Create(&corev1.Node{ObjectMeta: metav1.ObjectMeta{GenerateName: name}})},
			named{"delete node " + name, admissiontest.Delete(node(name, nil))},
			named{"update node " + name, admissiontest.Update(node(name, nil), node(name, nil))},
		)
	}
	cases := map[string][2]*corev1.Node{
		"set config source":     {with("n1", func(n *corev1.Node) { n.Spec.ConfigSource = src }), plain},
		"keep config source":    {with("n1", func(n *corev1.Node) { n.Spec.ConfigSource = src }), with("n1", func(n *corev1.Node) { n.Spec.ConfigSource = src })},
		"change config source":  {with("n1", func(n *corev1.Node) { n.Spec.ConfigSource = other }), with("n1", func(n *corev1.Node) { n.Spec.ConfigSource = src })},
		"drop config source":    {plain, with("n1", func(n *corev1.Node) { n.Spec.ConfigSource = src })},
		"add taint":             {with("n1", func(n *corev1.Node) { n.Spec.Taints = taint }), plain},
		"remove taint":          {plain, with("n1", func(n *corev1.Node) { n.Spec.Taints = taint })},
		"empty taints":          {with("n1", func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{} }), plain},
		"add owner":             {with("n1", func(n *corev1.Node) { n.OwnerReferences = []metav1.OwnerReference{{Name: "o"}} }), plain},
		"taint and bad label":   {with("n1", func(n *corev1.Node) { n.Spec.Taints = taint; n.Labels = map[string]string{"k8s.io/a": "b"} }), plain},
		"config source, taints": {with("n1", func(n *corev1.Node) { n.Spec.Taints = taint; n.Spec.ConfigSource = src }), plain},
	}
	for cn, c := range cases {
		out = append(out, named{"update: " + cn, admissiontest.Update(c[0], c[1])},
			named{"update status: " + cn, admissiontest.Update(c[0], c[1]).Resource(nodesGVR, "status")})
	}
	out = append(out, named{"create with config source", admissiontest.Create(with("n1", func(n *corev1.Node) { n.Spec.ConfigSource = src }))},
		named{"create with taints", admissiontest.Create(with("n1", func(n *corev1.Node) { n.Spec.Taints = taint }))},
		named{"create with config source and label", admissiontest.Create(with("n1", func(n *corev1.Node) {
			n.Spec.ConfigSource = src
			n.Labels = map[string]string{"k8s.io/a": "b"}
		}))},
	)
	return out
}
