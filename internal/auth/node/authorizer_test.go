package node

import (
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/admitd/admitd/internal/auth"
)

const (
	allowed = auth.DecisionAllow
	none    = auth.DecisionNoOpinion
	noRel1  = "no relationship found between node 'node1' and this object"
)

// cluster is two nodes whose pods share one secret, with a bound volume,
// an attachment, a resource slice and a pod certificate request on node1.
func cluster() *Graph {
	g := NewGraph(nil)
	str := func(s string) *string { return &s }
	g.AddPod(newPod("ns1", "p1", "node1", withSecretVolume("s1"), withSecretVolume("shared"),
		withConfigMapEnv("cm1"), withPVC("c1"), withServiceAccount("sa1"), func(p *corev1.Pod) {
			p.Spec.ResourceClaims = []corev1.PodResourceClaim{
				{Name: "direct", ResourceClaimName: str("rc1")},
				{Name: "tmpl", ResourceClaimTemplateName: str("t")},
				{Name: "pending", ResourceClaimTemplateName: str("t")},
			}
			p.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "tmpl", ResourceClaimName: str("p1-tmpl-x")}}
		}))
	g.AddPod(newPod("ns1", "p2", "node2", withSecretVolume("s2"), withSecretVolume("shared"),
		withConfigMapEnv("cm2"), withPVC("c2"), withServiceAccount("sa2")))
	g.AddPV(newPV("pv1", "ns1", "c1", func(pv *corev1.PersistentVolume) {
		pv.Spec.CSI = &corev1.CSIPersistentVolumeSource{
			NodePublishSecretRef:       &corev1.SecretReference{Namespace: "ns1", Name: "pvsecret1"},
			ControllerPublishSecretRef: &corev1.SecretReference{Namespace: "ns1", Name: "ctrlsecret"},
		}
	}))
	g.AddPV(newPV("pv2", "ns1", "c2"))
	g.AddVolumeAttachment(&storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va1"},
		Spec: storagev1.VolumeAttachmentSpec{NodeName: "node1"}})
	g.AddResourceSlice(&resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "slice1"},
		Spec: resourcev1.ResourceSliceSpec{NodeName: str("node1")}})
	g.AddPodCertificateRequest(&certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "pcr1"},
		Spec: certificatesv1.PodCertificateRequestSpec{NodeName: types.NodeName("node1")}})
	return g
}

type decisionCase struct {
	name   string
	attrs  auth.Attributes
	want   auth.Decision
	reason string
}

func TestAuthorizeGraph(t *testing.T) {
	a := newAuthorizer(t, cluster())
	n1 := func(verb, group, resource, sub, ns, name string) auth.Attributes {
		return attrs("node1", verb, group, resource, sub, ns, name)
	}
	cases := []decisionCase{
		{"allowed configmap", n1("get", "", "configmaps", "", "ns1", "cm1"), allowed, ""},
		{"allowed secret via pod", n1("get", "", "secrets", "", "ns1", "s1"), allowed, ""},
		{"list allowed secret via pod", n1("list", "", "secrets", "", "ns1", "s1"), allowed, ""},
		{"watch allowed secret via pod", n1("watch", "", "secrets", "", "ns1", "s1"), allowed, ""},
		{"disallowed list many secrets", n1("list", "", "secrets", "", "ns1", ""), none, "No Object name found"},
		{"disallowed list secrets from all namespaces with name", n1("list", "", "secrets", "", "", "s1"), none, "can only read namespaced object of this type"},
		{"disallowed secret update", n1("update", "", "secrets", "", "ns1", "s1"), none, "can only read resources of this type"},
		{"disallowed secret subresource", n1("get", "", "secrets", "x", "ns1", "s1"), none, "cannot read subresource"},
		{"allowed shared secret via pod", n1("get", "", "secrets", "", "ns1", "shared"), allowed, ""},
		{"allowed secret via pv", n1("get", "", "secrets", "", "ns1", "pvsecret1"), allowed, ""},
		{"disallowed controller secret via pv", n1("get", "", "secrets", "", "ns1", "ctrlsecret"), none, noRel1},
		{"allowed pvc", n1("get", "", "persistentvolumeclaims", "", "ns1", "c1"), allowed, ""},
		{"allowed pvc status update", n1("update", "", "persistentvolumeclaims", "status", "ns1", "c1"), allowed, ""},
		{"disallowed pvc status get", n1("get", "", "persistentvolumeclaims", "status", "ns1", "c1"), none, "can only get/update/patch this type"},
		{"disallowed pvc list", n1("list", "", "persistentvolumeclaims", "", "ns1", "c1"), none, "can only get individual resources of this type"},
		{"allowed pv", n1("get", "", "persistentvolumes", "", "", "pv1"), allowed, ""},
		{"allowed resource claim", n1("get", "resource.k8s.io", "resourceclaims", "", "ns1", "rc1"), allowed, ""},
		{"allowed resource claim with template", n1("get", "resource.k8s.io", "resourceclaims", "", "ns1", "p1-tmpl-x"), allowed, ""},
		{"disallowed resource claim subresource", n1("get", "resource.k8s.io", "resourceclaims", "status", "ns1", "rc1"), none, "cannot get subresource"},
		{"disallowed configmap", n1("get", "", "configmaps", "", "ns1", "cm2"), none, noRel1},
		{"disallowed secret via pod", n1("get", "", "secrets", "", "ns1", "s2"), none, noRel1},
		{"disallowed pvc", n1("get", "", "persistentvolumeclaims", "", "ns1", "c2"), none, noRel1},
		{"disallowed pv in a namespace", n1("get", "", "persistentvolumes", "", "ns1", "pv1"), none, noRel1},
		{"disallowed pv", n1("get", "", "persistentvolumes", "", "", "pv2"), none, noRel1},
		{"disallowed unknown secret", n1("get", "", "secrets", "", "ns1", "nope"), none, noRel1},
		{"disallowed secret in other namespace", n1("get", "", "secrets", "", "ns2", "s1"), none, noRel1},
		{"allowed attachment", n1("get", "storage.k8s.io", "volumeattachments", "", "", "va1"), allowed, ""},
		{"allowed svcacct token create", n1("create", "", "serviceaccounts", "token", "ns1", "sa1"), allowed, ""},
		{"disallowed svcacct token create - not attached", n1("create", "", "serviceaccounts", "token", "ns1", "sa2"), none, noRel1},
		{"disallowed svcacct token create - no subresource", n1("create", "", "serviceaccounts", "", "ns1", "sa1"), none, "can only create token subresource of serviceaccount"},
		{"disallowed svcacct token create - non create", n1("update", "", "serviceaccounts", "token", "ns1", "sa1"), none, "can only create tokens for individual service accounts"},
		{"get allowed svcacct via pod", n1("get", "", "serviceaccounts", "", "ns1", "sa1"), allowed, ""},
		{"list svcacct is a token request", n1("list", "", "serviceaccounts", "", "ns1", "sa1"), none, "can only create tokens for individual service accounts"},
		{"allowed pod", n1("get", "", "pods", "", "ns1", "p1"), allowed, ""},
		{"disallowed pod on other node", n1("get", "", "pods", "", "ns1", "p2"), none, noRel1},
		{"allowed watch of one pod", n1("watch", "", "pods", "", "ns1", "p1"), allowed, ""},
		{"allowed pod list by node", withNodeSelector(n1("list", "", "pods", "", "", ""), "node1"), allowed, ""},
		{"disallowed pod list of other node", withNodeSelector(n1("list", "", "pods", "", "", ""), "node2"), none, "can only list/watch pods with spec.nodeName field selector"},
		{"allowed mirror pod create", n1("create", "", "pods", "", "ns1", ""), allowed, ""},
		{"allowed pod status patch", n1("patch", "", "pods", "status", "ns1", "p2"), allowed, ""},
		{"allowed pod eviction", n1("create", "", "pods", "eviction", "ns1", "p2"), allowed, ""},
		{"pod update left to RBAC", n1("update", "", "pods", "", "ns1", "p1"), none, ""},
		{"allowed pcr get", n1("get", "certificates.k8s.io", "podcertificaterequests", "", "ns1", "pcr1"), allowed, ""},
		{"allowed pcr create", n1("create", "certificates.k8s.io", "podcertificaterequests", "", "ns1", ""), allowed, ""},
		{"disallowed pcr list (un-filtered)", n1("list", "certificates.k8s.io", "podcertificaterequests", "", "ns1", ""), none, "can only list/watch podcertificaterequests with nodeName field selector"},
		{"allowed pcr watch (filtered)", withNodeSelector(n1("watch", "certificates.k8s.io", "podcertificaterequests", "", "", ""), "node1"), allowed, ""},
		{"disallowed pcr delete", n1("delete", "certificates.k8s.io", "podcertificaterequests", "", "ns1", "pcr1"), none, "nodes may not delete podcertificaterequests"},
		{"disallowed pcr status", n1("update", "certificates.k8s.io", "podcertificaterequests", "status", "ns1", "pcr1"), none, "nodes may not access the status subresource of PodCertificateRequests"},
		{"allowed slice get", n1("get", "resource.k8s.io", "resourceslices", "", "", "slice1"), allowed, ""},
		{"disallowed unknown slice", n1("update", "resource.k8s.io", "resourceslices", "", "", "slice2"), none, noRel1},
		{"allowed slice create", n1("create", "resource.k8s.io", "resourceslices", "", "", ""), allowed, ""},
		{"allowed slice deletecollection filtered", withNodeSelector(n1("deletecollection", "resource.k8s.io", "resourceslices", "", "", ""), "node1"), allowed, ""},
		{"disallowed slice list", n1("list", "resource.k8s.io", "resourceslices", "", "", ""), none, "can only list/watch/deletecollection resourceslices with nodeName field selector"},
		{"disallowed slice escalate", n1("escalate", "resource.k8s.io", "resourceslices", "", "", ""), none, "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection"},
		{"disallowed slice status", n1("get", "resource.k8s.io", "resourceslices", "status", "", "slice1"), none, "cannot authorize ResourceSlice subresources"},
	}
	run(t, a, cases)
}

func TestAuthorizeFixed(t *testing.T) {
	a := newAuthorizer(t, NewGraph(nil))
	n1 := func(verb, group, resource, sub, ns, name string) auth.Attributes {
		return attrs("node1", verb, group, resource, sub, ns, name)
	}
	const leases, lns = "coordination.k8s.io", "kube-node-lease"
	cases := []decisionCase{
		{"allowed get node lease", n1("get", leases, "leases", "", lns, "node1"), allowed, ""},
		{"allowed create node lease", n1("create", leases, "leases", "", lns, "other"), allowed, ""},
		{"disallowed get another node's lease", n1("get", leases, "leases", "", lns, "node2"), none, "can only access node lease with the same name as the requesting node"},
		{"disallowed list node leases", n1("list", leases, "leases", "", lns, ""), none, "can only get, create, update, patch, or delete a node lease"},
		{"disallowed lease in other namespace", n1("get", leases, "leases", "", "default", "node1"), none, `can only access leases in the "kube-node-lease" system namespace`},
		{"allowed get CSINode", n1("get", "storage.k8s.io", "csinodes", "", "", "node1"), allowed, ""},
		{"disallowed get another node's CSINode", n1("get", "storage.k8s.io", "csinodes", "", "", "node2"), none, "can only access CSINode with the same name as the requesting node"},
		{"disallowed list CSINodes", n1("list", "storage.k8s.io", "csinodes", "", "", ""), none, "can only get, create, update, patch, or delete a CSINode"},
		{"disallowed CSINode status - feature disabled", n1("get", "storage.k8s.io", "csinodes", "status", "", "node1"), none, "CSINode status access requires CSIVolumeHealth feature"},
		{"disallowed CSINode with unknown subresource", n1("get", "storage.k8s.io", "csinodes", "foo", "", "node1"), none, "cannot authorize CSINode subresources"},
		{"allowed get own node", n1("get", "", "nodes", "", "", "node1"), allowed, ""},
		{"disallowed list all nodes", n1("list", "", "nodes", "", "", ""), none, "node 'node1' cannot read all nodes, only its own Node object"},
		{"disallowed get other node", n1("get", "", "nodes", "", "", "node2"), none, "node 'node1' cannot read 'node2', only its own Node object"},
		{"allowed node create", n1("create", "", "nodes", "", "", ""), allowed, ""},
		{"allowed node status patch", n1("patch", "", "nodes", "status", "", "node2"), allowed, ""},
		{"node delete left to RBAC", n1("delete", "", "nodes", "", "", "node1"), none, ""},
		{"static rule: create tokenreviews", n1("create", "authentication.k8s.io", "tokenreviews", "", "", ""), allowed, ""},
		{"static rule: get services", n1("list", "", "services", "", "", ""), allowed, ""},
		{"static rule: create events", n1("create", "", "events", "", "ns1", ""), allowed, ""},
		{"no static rule: delete namespaces", n1("delete", "", "namespaces", "", "", "ns1"), none, ""},
		{"non-resource request", auth.Attributes{User: nodeUser("node1"), Verb: "get", Path: "/healthz"}, none, ""},
		{"unknown node name", attrs("", "get", "", "nodes", "", "", ""), none, `unknown node for user "system:node:"`},
	}
	run(t, a, cases)
}

func TestAuthorizeNotANode(t *testing.T) {
	a := newAuthorizer(t, cluster())
	for _, u := range []string{"alice", "system:node:node1"} {
		at := attrs("node1", "get", "", "secrets", "", "ns1", "s1")
		at.User.Username = u
		if u == "system:node:node1" {
			at.User.Groups = []string{auth.AllAuthenticated} // not in system:nodes
		}
		if d, reason := decide(t, a, at); d != none || reason != "" {
			t.Errorf("Authorize(%s) = %v, %q, want no opinion and no reason", u, d, reason)
		}
	}
}

func TestRulesReview(t *testing.T) {
	a := newAuthorizer(t, NewGraph(nil))
	_, _, incomplete, err := a.RulesReview(nodeUser("n"), "ns")
	if !incomplete || err == nil {
		t.Errorf("RulesReview(node) = incomplete %v, err %v, want true and an error", incomplete, err)
	}
	alice := nodeUser("n")
	alice.Username = "alice"
	_, _, incomplete, err = a.RulesReview(alice, "ns")
	if incomplete || err != nil {
		t.Errorf("RulesReview(alice) = incomplete %v, err %v, want false and no error", incomplete, err)
	}
}

func run(t *testing.T, a *Authorizer, cases []decisionCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, reason := decide(t, a, c.attrs)
			if d != c.want || reason != c.reason {
				t.Errorf("Authorize(%s %s/%s) = %v, %q, want %v, %q", c.attrs.Verb, c.attrs.Resource, c.attrs.Name, d, reason, c.want, c.reason)
			}
		})
	}
}
