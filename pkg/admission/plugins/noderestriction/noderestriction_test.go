package noderestriction

import (
	"context"
	"errors"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

// objects is an ObjectLookup over a map by resource/namespace/name.
type objects map[string]runtime.Object

func (o objects) GetObject(_ context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	if obj, ok := o[gvr.Resource+"/"+namespace+"/"+name]; ok {
		return obj, nil
	}
	if obj, ok := o["error/"+gvr.Resource]; ok {
		return nil, obj.(*storageError)
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

// storageError is a lookup failure other than NotFound.
type storageError struct{ runtime.Object }

func (*storageError) Error() string { return "storage unavailable" }

func pod(name, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{NodeName: node}}
}

func testPlugin(extra objects) *Plugin {
	o := objects{
		"nodes//n1":    &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "n1-uid"}},
		"pods/ns/mine": pod("mine", "n1"),
		"pods/ns/other": func() *corev1.Pod {
			p := pod("other", "n2")
			p.Spec.Volumes = []corev1.Volume{{Name: "t", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "a"}}}}}}}
			return p
		}(),
	}
	for k, v := range extra {
		o[k] = v
	}
	authz := admission.AuthorizerFunc(func(_ context.Context, a admission.AuthorizationAttributes) (admission.AuthorizationDecision, string, error) {
		switch a.Resource {
		case "granted":
			if a.Verb == "request-serviceaccounts-token-audience" && a.Name == "sa" && a.Namespace == "ns" && a.User.Username == "system:node:n1" {
				return admission.AuthorizationAllow, "", nil
			}
		case "broken":
			return admission.AuthorizationNoOpinion, "", errors.New("no authorizer")
		}
		return admission.AuthorizationNoOpinion, "", nil
	})
	return New(o, authz)
}

const node1 = "system:node:n1"

var nodes = []string{"system:nodes"}

func mirror(mutate func(*corev1.Pod)) *corev1.Pod {
	p := pod("m", "n1")
	p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "n1", UID: "n1-uid", Controller: ptr.To(true)}}
	mutate(p)
	return p
}

func TestPods(t *testing.T) {
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	p := testPlugin(nil)
	admissiontest.Run(t, p, []admissiontest.Case{
		{Name: "other users are not restricted", Attributes: admissiontest.Create(pod("x", "n2")).User("alice", "system:nodes").Attributes()},
		{Name: "node prefix without the nodes group", Attributes: admissiontest.Create(pod("x", "n2")).User(node1).Attributes()},
		{Name: "node without a name", Attributes: admissiontest.Create(pod("x", "n2")).User("system:node:", nodes...).Attributes(), WantCode: 403,
			WantErr: `pods "x" is forbidden: could not determine node from user "system:node:"`},
		{Name: "mirror pod", Attributes: admissiontest.Create(mirror(func(*corev1.Pod) {})).User(node1, nodes...).Attributes()},
		{Name: "plain pod", Attributes: admissiontest.Create(pod("x", "n1")).User(node1, nodes...).Attributes(), WantCode: 403,
			WantErr: `pods "x" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods`},
		{Name: "mirror pod on another node", Attributes: admissiontest.Create(mirror(func(p *corev1.Pod) { p.Spec.NodeName = "n2" })).User(node1, nodes...).Attributes(),
			WantErr: `pods "m" is forbidden: node "n1" can only create pods with spec.nodeName set to itself`},
		{Name: "owner UID of an older node", Attributes: admissiontest.Create(mirror(func(p *corev1.Pod) { p.OwnerReferences[0].UID = "old" })).User(node1, nodes...).Attributes(),
			WantErr: `pods "m" is forbidden: node n1 UID mismatch: expected old got n1-uid`},
		{Name: "blockOwnerDeletion", Attributes: admissiontest.Create(mirror(func(p *corev1.Pod) { p.OwnerReferences[0].BlockOwnerDeletion = ptr.To(true) })).User(node1, nodes...).Attributes(),
			WantErr: `pods "m" is forbidden: node "n1" must not set blockOwnerDeletion on an owner reference`},
		{Name: "secret in an init container", Attributes: admissiontest.Create(mirror(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}}}}}}
		})).User(node1, nodes...).Attributes(), WantErr: `pods "m" is forbidden: node "n1" can not create pods that reference secrets`},
		{Name: "missing node", Attributes: admissiontest.Create(mirror(func(p *corev1.Pod) { p.Spec.NodeName, p.OwnerReferences[0].Name = "n9", "n9" })).User("system:node:n9", nodes...).Attributes(),
			WantErr: `node "n9" not found`, WantCode: 404},
		{Name: "delete own pod", Attributes: admissiontest.Delete(pod("mine", "")).User(node1, nodes...).Attributes()},
		{Name: "delete another node's pod", Attributes: admissiontest.Delete(pod("other", "")).User(node1, nodes...).Attributes(),
			WantErr: `pods "other" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself`},
		{Name: "delete a missing pod", Attributes: admissiontest.Delete(pod("gone", "")).User(node1, nodes...).Attributes(), WantErr: `pod "gone" not found`, WantCode: 404},
		{Name: "evict another node's pod", Attributes: admissiontest.Create(&policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "ns"}}).
			Resource(pods, "eviction").User(node1, nodes...).Attributes(), WantErr: `pods "other" is forbidden: node n1 can only evict pods with spec.nodeName set to itself`},
		{Name: "status labels", Attributes: admissiontest.Update(func() *corev1.Pod { p := pod("mine", "n1"); p.Labels = map[string]string{"a": "b"}; return p }(), pod("mine", "n1")).
			Resource(pods, "status").User(node1, nodes...).Attributes(), WantErr: `pods "mine" is forbidden: node "n1" cannot update labels through pod status`},
		{Name: "exec", Attributes: admissiontest.Update(pod("mine", "n1"), pod("mine", "n1")).Resource(pods, "exec").User(node1, nodes...).Attributes(),
			WantErr: `pods "mine" is forbidden: unexpected pod subresource "exec", only 'status' and 'eviction' are allowed`},
	})
}

func TestPodLookupFailure(t *testing.T) {
	p := testPlugin(objects{"error/pods": &storageError{}})
	admissiontest.Run(t, p, []admissiontest.Case{
		{Name: "delete when pods cannot be read", Attributes: admissiontest.Delete(pod("gone", "")).User(node1, nodes...).Attributes(), WantCode: 403,
			WantErr: `pods "gone" is forbidden: storage unavailable`},
	})
}

func nodeWith(labels map[string]string, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
}

func TestNodes(t *testing.T) {
	p := testPlugin(nil)
	taint := corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoSchedule}
	admissiontest.Run(t, p, []admissiontest.Case{
		{Name: "kubelet labels", Attributes: admissiontest.Create(nodeWith(map[string]string{"kubernetes.io/hostname": "h", "x.node.kubernetes.io/y": "z", "example.com/a": "b"})).User(node1, nodes...).Attributes()},
		{Name: "restricted labels on create", Attributes: admissiontest.Create(nodeWith(map[string]string{"node-restriction.kubernetes.io/a": "b", "k8s.io/a": "b", "node-role.kubernetes.io/x": ""})).User(node1, nodes...).Attributes(),
			WantErr: `nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: k8s.io/a, node-restriction.kubernetes.io/a, node-role.kubernetes.io/x`},
		{Name: "removing a restricted label", Attributes: admissiontest.Update(nodeWith(nil), nodeWith(map[string]string{"kubernetes.io/a": "b"})).User(node1, nodes...).Attributes(),
			WantErr: `nodes "n1" is forbidden: is not allowed to modify labels: kubernetes.io/a`},
		{Name: "keeping a restricted label", Attributes: admissiontest.Update(nodeWith(map[string]string{"kubernetes.io/a": "b"}), nodeWith(map[string]string{"kubernetes.io/a": "b"})).User(node1, nodes...).Attributes()},
		{Name: "taints on create", Attributes: admissiontest.Create(nodeWith(nil, taint)).User(node1, nodes...).Attributes()},
		{Name: "removing a taint", Attributes: admissiontest.Update(nodeWith(nil), nodeWith(nil, taint)).User(node1, nodes...).Attributes(),
			WantErr: `nodes "n1" is forbidden: node "n1" is not allowed to modify taints`},
		{Name: "another node", Attributes: admissiontest.Update(nodeWith(nil), nodeWith(nil)).User("system:node:n2", nodes...).Attributes(),
			WantErr: `nodes "n1" is forbidden: node "n2" is not allowed to modify node "n1"`},
	})
}

func TestTokensLeasesSlices(t *testing.T) {
	sas := schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	p := testPlugin(objects{"csidrivers//d": &storagev1.CSIDriver{Spec: storagev1.CSIDriverSpec{TokenRequests: []storagev1.TokenRequest{{Audience: "a"}}}}})
	token := func(podName string, audiences ...string) *admissiontest.Builder {
		return admissiontest.Create(&authenticationv1.TokenRequest{ObjectMeta: metav1.ObjectMeta{Name: "sa", Namespace: "ns"},
			Spec: authenticationv1.TokenRequestSpec{Audiences: audiences, BoundObjectRef: &authenticationv1.BoundObjectReference{
				APIVersion: "v1", Kind: "Pod", Name: podName, UID: types.UID("uid-" + podName)}}}).Resource(sas, "token")
	}
	slice := func(node *string) *resourcev1.ResourceSlice {
		return &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: resourcev1.ResourceSliceSpec{NodeName: node}}
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n2", Namespace: "kube-node-lease"}}
	admissiontest.Run(t, p, []admissiontest.Case{
		{Name: "token for own pod, audience granted", Attributes: token("mine", "granted").User(node1, nodes...).Attributes()},
		{Name: "token for own pod, audience not used", Attributes: token("mine", "other").User(node1, nodes...).Attributes(),
			WantErr: `serviceaccounts "sa" is forbidden: system:node:n1 is not authorized to request tokens for audience "other"`},
		{Name: "token when the authorizer fails", Attributes: token("mine", "broken").User(node1, nodes...).Attributes(),
			WantErr: `serviceaccounts "sa" is forbidden: error authorizing system:node:n1 to request tokens for audience "broken": no authorizer`},
		{Name: "token for another node's pod", Attributes: token("other", "a").User(node1, nodes...).Attributes(),
			WantErr: `serviceaccounts "sa" is forbidden: node requested token bound to a pod scheduled on a different node`},
		{Name: "token for a projected audience", Attributes: token("other", "a").User("system:node:n2", nodes...).Attributes()},
		{Name: "other node's lease", Attributes: admissiontest.Create(lease).User(node1, nodes...).Attributes(),
			WantErr: `leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node`},
		{Name: "own slice", Attributes: admissiontest.Create(slice(ptr.To("n1"))).User(node1, nodes...).Attributes()},
		{Name: "slice without node", Attributes: admissiontest.Delete(slice(nil)).User(node1, nodes...).Attributes(),
			WantErr: `resourceslices.resource.k8s.io "s" is forbidden: can only delete ResourceSlice with the same NodeName as the requesting node`},
	})
}

func TestRegisterNeedsLookups(t *testing.T) {
	r := admission.NewRegistry()
	Register(r)
	if _, err := r.NewChain([]string{Name}, admission.PluginContext{}, nil); err == nil {
		t.Errorf("NewChain without an object lookup = nil error, want one")
	}
	pc := admission.PluginContext{Objects: objects{}, Authorizer: admission.AuthorizerFunc(nil)}
	if _, err := r.NewChain([]string{Name}, pc, nil); err != nil {
		t.Errorf("NewChain = %v, want a chain", err)
	}
}

// BenchmarkAdmitMirrorPod is the costliest common node request: every
// owner and reference check and one node lookup.
func BenchmarkAdmitMirrorPod(b *testing.B) {
	p := testPlugin(nil)
	a := admissiontest.Create(mirror(func(*corev1.Pod) {})).User(node1, nodes...).Attributes()
	ctx := context.Background()
	for b.Loop() {
		if err := p.Admit(ctx, a); err != nil {
			b.Fatal(err)
		}
	}
}
