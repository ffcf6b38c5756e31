package ownerreferences

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/admission"
)

// upstreamDiscovery is the discovery of upstream's own test.
var upstreamDiscovery = []*metav1.APIResourceList{
	{GroupVersion: "v1", APIResources: []metav1.APIResource{
		{Name: "nodes", Namespaced: false, Kind: "Node"},
		{Name: "pods", Namespaced: true, Kind: "Pod"},
		{Name: "replicationcontrollers", Namespaced: true, Kind: "ReplicationController"},
	}},
	{GroupVersion: appsv1.SchemeGroupVersion.String(), APIResources: []metav1.APIResource{
		{Name: "daemonsets", Namespaced: true, Kind: "DaemonSet"},
	}},
}

// upstreamAuthz is upstream's test authorizer: "non-X-deleter" may neither
// delete X nor update its finalizers nor finalize everything; everyone
// else may do anything.
func upstreamAuthz(c check) (admission.AuthorizationDecision, string, error) {
	no := func() (admission.AuthorizationDecision, string, error) {
		return admission.AuthorizationNoOpinion, "", nil
	}
	resource := map[string]string{"non-pod-deleter": "pods", "non-rc-deleter": "replicationcontrollers", "non-node-deleter": "nodes"}[c.User]
	switch {
	case c.User == "non-deleter" && (c.Verb == "delete" || (c.Verb == "update" && c.Subresource == "finalizers")):
		return no()
	case resource != "" && c.Verb == "delete" && c.Resource == resource:
		return no()
	case resource != "" && c.Verb == "update" && c.Resource == resource && c.Subresource == "finalizers":
		return no()
	case (c.User == "non-deleter" || resource != "") && c.APIGroup == "*" && c.Resource == "*":
		return no()
	}
	return admission.AuthorizationAllow, "", nil
}

func pod(refs ...metav1.OwnerReference) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: refs}}
}

type tcase struct {
	name        string
	user        string
	resource    string
	subresource string
	old, obj    runtime.Object
}

func TestUpstreamTables(t *testing.T) {
	block := func(apiVersion, kind, name string, b *bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, BlockOwnerDeletion: b}
	}
	yes, no := ptr.To(true), ptr.To(false)
	blockRC1, blockRC2 := block("v1", "ReplicationController", "rc1", yes), block("v1", "ReplicationController", "rc2", yes)
	notBlockRC1, notBlockRC2 := block("v1", "ReplicationController", "rc1", no), block("v1", "ReplicationController", "rc2", no)
	nilBlockRC1, nilBlockRC2 := block("v1", "ReplicationController", "rc1", nil), block("v1", "ReplicationController", "rc2", nil)
	blockDS1, notBlockDS1 := block("apps/v1", "DaemonSet", "ds1", yes), block("apps/v1", "DaemonSet", "ds1", no)
	blockNode, notBlockNode, nilBlockNode := block("v1", "Node", "node1", yes), block("v1", "Node", "node", no), block("v1", "Node", "node", nil)
	first, second := metav1.OwnerReference{Name: "first"}, metav1.OwnerReference{Name: "second"}
	var none runtime.Object
	cases := []tcase{
		// TestGCAdmission
		{"super-user, create, no objectref change", "super", "pods", "", none, pod()},
		{"super-user, create, objectref change", "super", "pods", "", none, pod(first)},
		{"non-deleter, create, no objectref change", "non-deleter", "pods", "", none, pod()},
		{"non-deleter, create, objectref change", "non-deleter", "pods", "", none, pod(first)},
		{"non-pod-deleter, create, no objectref change", "non-pod-deleter", "pods", "", none, pod()},
		{"non-pod-deleter, create, objectref change", "non-pod-deleter", "pods", "", none, pod(first)},
		{"non-pod-deleter, create, objectref change, but not a pod", "non-pod-deleter", "not-pods", "", none, pod(first)},
		{"super-user, update, no objectref change", "super", "pods", "", pod(), pod()},
		{"super-user, update, no objectref change two", "super", "pods", "", pod(first), pod(first)},
		{"super-user, update, objectref change", "super", "pods", "", pod(), pod(first)},
		{"non-deleter, update, no objectref change", "non-deleter", "pods", "", pod(), pod()},
		{"non-deleter, update, no objectref change two", "non-deleter", "pods", "", pod(first), pod(first)},
		{"non-deleter, update, objectref change", "non-deleter", "pods", "", pod(), pod(first)},
		{"non-deleter, update, objectref change two", "non-deleter", "pods", "", pod(first), pod(first, second)},
		{"non-pod-deleter, update, no objectref change", "non-pod-deleter", "pods", "", pod(), pod()},
		{"non-pod-deleter, update status, objectref change", "non-pod-deleter", "pods", "status", pod(), pod(first)},
		{"non-pod-deleter, update, objectref change", "non-pod-deleter", "pods", "", pod(), pod(first)},
		{"non-pod-deleter, update, objectref change, but not a pod", "non-pod-deleter", "not-pods", "", pod(), pod(first)},
		// TestBlockOwnerDeletionAdmission
		{"super-user, create, no ownerReferences", "super", "pods", "", none, pod()},
		{"super-user, create, all blockOwnerDeletion=false", "super", "pods", "", none, pod(notBlockRC1, notBlockRC2)},
		{"super-user, create, some blockOwnerDeletion=true", "super", "pods", "", none, pod(blockRC1, blockRC2, blockNode)},
		{"non-rc-deleter, create, no ownerReferences", "non-rc-deleter", "pods", "", none, pod()},
		{"non-rc-deleter, create, all blockOwnerDeletion=false or nil", "non-rc-deleter", "pods", "", none, pod(notBlockRC1, nilBlockRC2)},
		{"non-node-deleter, create, all blockOwnerDeletion=false", "non-node-deleter", "pods", "", none, pod(notBlockNode)},
		{"non-rc-deleter, create, some blockOwnerDeletion=true", "non-rc-deleter", "pods", "", none, pod(blockRC1, notBlockRC2)},
		{"non-rc-deleter, create, blockOwnerDeletion=true to daemonset", "non-rc-deleter", "pods", "", none, pod(blockDS1)},
		{"non-node-deleter, create, some blockOwnerDeletion=true", "non-node-deleter", "pods", "", none, pod(blockNode)},
		{"super-user, update, no blockOwnerDeletion change", "super", "pods", "", pod(nilBlockRC1, nilBlockNode), pod(notBlockRC1, notBlockNode)},
		{"super-user, update, some change to blockOwnerDeletion=true", "super", "pods", "", pod(notBlockRC1, notBlockNode), pod(blockRC1, blockNode)},
		{"super-user, update, add new blockOwnerDeletion=true", "super", "pods", "", pod(), pod(blockRC1, blockNode)},
		{"non-rc-deleter, update, no blockOwnerDeletion change", "non-rc-deleter", "pods", "", pod(nilBlockRC1), pod(notBlockRC1)},
		{"non-rc-deleter, update, false to true", "non-rc-deleter", "pods", "", pod(notBlockRC1), pod(blockRC1)},
		{"non-rc-deleter, update, nil to true", "non-rc-deleter", "pods", "", pod(nilBlockRC1), pod(blockRC1)},
		{"non-node-deleter, update, nil to true", "non-node-deleter", "pods", "", pod(nilBlockNode), pod(blockNode)},
		{"non-rc-deleter, update, true to false", "non-rc-deleter", "pods", "", pod(blockRC1), pod(notBlockRC1)},
		{"non-node-deleter, update, true to false", "non-node-deleter", "pods", "", pod(blockNode), pod(notBlockNode)},
		{"non-rc-deleter, update, change to daemonset only", "non-rc-deleter", "pods", "", pod(notBlockDS1), pod(blockDS1)},
		{"non-rc-deleter, update, add nil or false", "non-rc-deleter", "pods", "", pod(), pod(notBlockRC1, nilBlockRC2)},
		{"non-rc-deleter, update, add true", "non-rc-deleter", "pods", "", pod(), pod(blockRC1)},
		{"non-rc-deleter, update, add true to daemonset", "non-rc-deleter", "pods", "", pod(), pod(blockDS1)},
		{"non-node-deleter, update, add true", "non-node-deleter", "pods", "", pod(), pod(blockNode)},
	}
	mapper := discoveryMapper(t, upstreamDiscovery)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := request{op: admission.Create, resource: corev1.SchemeGroupVersion.WithResource(tc.resource), subresource: tc.subresource,
				namespace: metav1.NamespaceDefault, name: "foo", obj: tc.obj, old: tc.old, user: tc.user}
			if tc.old != nil {
				r.op = admission.Update
			}
			compare(t, upstreamAuthz, mapper, mapper, r)
		})
	}
}
