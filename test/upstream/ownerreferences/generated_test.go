package ownerreferences

import (
	"errors"
	"math/rand"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/admissionsource"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	ours "github.com/admitd/admitd/pkg/admission/plugins/ownerreferencespermissionenforcement"
)

// kubeAPIServerDiscovery is kube-apiserver 1.37's discovery of the kinds
// the generated owner references name.
var kubeAPIServerDiscovery = []*metav1.APIResourceList{
	{GroupVersion: "v1", APIResources: []metav1.APIResource{
		{Name: "configmaps", Namespaced: true, Kind: "ConfigMap"},
		{Name: "namespaces", Namespaced: false, Kind: "Namespace"},
		{Name: "nodes", Namespaced: false, Kind: "Node"},
		{Name: "pods", Namespaced: true, Kind: "Pod"},
		{Name: "replicationcontrollers", Namespaced: true, Kind: "ReplicationController"},
		{Name: "secrets", Namespaced: true, Kind: "Secret"},
	}},
	{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
		{Name: "daemonsets", Namespaced: true, Kind: "DaemonSet"},
		{Name: "deployments", Namespaced: true, Kind: "Deployment"},
		{Name: "replicasets", Namespaced: true, Kind: "ReplicaSet"},
		{Name: "statefulsets", Namespaced: true, Kind: "StatefulSet"},
	}},
	{GroupVersion: "batch/v1", APIResources: []metav1.APIResource{
		{Name: "jobs", Namespaced: true, Kind: "Job"},
		{Name: "cronjobs", Namespaced: true, Kind: "CronJob"},
	}},
	{GroupVersion: "autoscaling/v2", APIResources: []metav1.APIResource{
		{Name: "horizontalpodautoscalers", Namespaced: true, Kind: "HorizontalPodAutoscaler"},
	}},
	{GroupVersion: "autoscaling/v1", APIResources: []metav1.APIResource{
		{Name: "horizontalpodautoscalers", Namespaced: true, Kind: "HorizontalPodAutoscaler"},
	}},
	{GroupVersion: "certificates.k8s.io/v1", APIResources: []metav1.APIResource{
		{Name: "certificatesigningrequests", Namespaced: false, Kind: "CertificateSigningRequest"},
	}},
	{GroupVersion: "rbac.authorization.k8s.io/v1", APIResources: []metav1.APIResource{
		{Name: "clusterroles", Namespaced: false, Kind: "ClusterRole"},
		{Name: "roles", Namespaced: true, Kind: "Role"},
	}},
}

// owners are the owner references generated requests name.
var owners = []metav1.OwnerReference{
	{APIVersion: "v1", Kind: "ReplicationController", Name: "rc1"},
	{APIVersion: "v1", Kind: "Node", Name: "node1"},
	{APIVersion: "v1", Kind: "ConfigMap", Name: "cm"},
	{APIVersion: "v1", Kind: "Namespace", Name: "ns"},
	{APIVersion: "v1", Kind: "Pod", Name: "p"},
	{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds1"},
	{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs"},
	{APIVersion: "apps/v1", Kind: "Deployment", Name: "d"},
	{APIVersion: "batch/v1", Kind: "Job", Name: "j"},
	{APIVersion: "autoscaling/v1", Kind: "HorizontalPodAutoscaler", Name: "h"},
	{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "h"},
	{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest", Name: "c"},
	{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "cr"},
	{APIVersion: "example.com/v1", Kind: "Widget", Name: "w"},
	{APIVersion: "", Kind: "ConfigMap", Name: "cm"},
	{APIVersion: "", Kind: "ReplicaSet", Name: "rs"},
	{APIVersion: "a/b/c", Kind: "X", Name: "x"},
	{APIVersion: "apps/v2", Kind: "Deployment", Name: "d"},
	{APIVersion: "extensions/v1beta1", Kind: "ReplicaSet", Name: "rs"},
	{APIVersion: "v1", Kind: "Replicationcontroller", Name: "rc1"},
}

func pick[T any](r *rand.Rand, list ...T) T { return list[r.Intn(len(list))] }

// genDecider allows a few random verb/resource/subresource triples,
// finalize-everything among them, and gives the rest a fallback decision;
// sometimes it fails.
func genDecider(r *rand.Rand) decider {
	type rule struct{ verb, resource, subresource string }
	allowed := map[rule]bool{}
	for i := r.Intn(5); i > 0; i-- {
		allowed[rule{pick(r, "delete", "update"), pick(r, "pods", "configmaps", "nodes", "replicationcontrollers", "replicasets", "daemonsets",
			"horizontalpodautoscalers", "namespaces", "*"), pick(r, "", "finalizers", "status")}] = true
	}
	fallback := pick(r, admission.AuthorizationDeny, admission.AuthorizationNoOpinion)
	reason := pick(r, "", "no rule", `RBAC: role "x" not found`)
	var err error
	if r.Intn(8) == 0 {
		err = errors.New("authorizer failed")
	}
	errDecision := pick(r, admission.AuthorizationAllow, admission.AuthorizationDeny, admission.AuthorizationNoOpinion)
	return func(c check) (admission.AuthorizationDecision, string, error) {
		if err != nil && c.Verb == "update" {
			return errDecision, "failed", err
		}
		if allowed[rule{c.Verb, c.Resource, c.Subresource}] {
			return admission.AuthorizationAllow, "", nil
		}
		return fallback, reason, nil
	}
}

func genRefs(r *rand.Rand) []metav1.OwnerReference {
	var out []metav1.OwnerReference
	for i := r.Intn(4); i > 0; i-- {
		ref := pick(r, owners...)
		ref.UID = types.UID(pick(r, "u1", "u2", "u3"))
		ref.BlockOwnerDeletion = pick(r, nil, ptr.To(false), ptr.To(true))
		if r.Intn(4) == 0 {
			ref.Controller = ptr.To(true)
		}
		out = append(out, ref)
	}
	return out
}

// editRefs changes a copy of refs in one random way, or not at all.
func editRefs(r *rand.Rand, refs []metav1.OwnerReference) []metav1.OwnerReference {
	out := make([]metav1.OwnerReference, 0, len(refs))
	for _, ref := range refs {
		ref.BlockOwnerDeletion = ptr.To(ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion)
		out = append(out, ref)
	}
	switch r.Intn(6) {
	case 0:
		return refs
	case 1:
		return append(out, genRefs(r)...)
	case 2:
		if len(out) > 0 {
			i := r.Intn(len(out))
			out[i].BlockOwnerDeletion = ptr.To(!*out[i].BlockOwnerDeletion)
		}
	case 3:
		r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	case 4:
		return genRefs(r)
	case 5:
		if len(out) > 0 {
			out = out[1:]
		}
	}
	return out
}

func genRequest(r *rand.Rand) request {
	req := request{op: pick(r, admission.Create, admission.Create, admission.Update, admission.Update, admission.Delete, admission.Connect),
		namespace: "default", name: pick(r, "child", ""), user: pick(r, "alice", "bob"), subresource: pick(r, "", "", "status", "finalizers")}
	switch r.Intn(3) {
	case 0:
		req.resource = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	case 1:
		req.resource = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	default:
		req.resource = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
		req.namespace = ""
	}
	refs := genRefs(r)
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: req.namespace, OwnerReferences: refs}}
	old := obj.DeepCopy()
	old.OwnerReferences = editRefs(r, refs)
	if r.Intn(2) == 0 {
		obj, old = old, obj
	}
	switch req.op {
	case admission.Create:
		req.obj = obj
	case admission.Update:
		req.obj, req.old = obj, old
	case admission.Delete:
		req.old = old
	}
	return req
}

func runGenerated(t *testing.T, seed int64, n int, upMapper meta.RESTMapper, ourMapper ours.RESTMapper) {
	r := rand.New(rand.NewSource(seed))
	counts := map[string]int{}
	for i := 0; i < n; i++ {
		decide, req := genDecider(r), genRequest(r)
		out, ok := compare(t, decide, upMapper, ourMapper, req)
		switch {
		case !ok:
			counts["differ"]++
			if counts["differ"] > 10 {
				t.Fatal("too many differences")
			}
		case !out.handles:
			counts["not handled"]++
		case out.err == "":
			counts["admitted"]++
		case strings.Contains(out.err, "you can't delete"):
			counts["refused: delete"]++
		case strings.Contains(out.err, "RESTMapping"):
			counts["refused: mapping"]++
		case strings.Contains(out.err, "finalizers on"):
			counts["refused: finalizers"]++
		default:
			counts["refused: other"]++
		}
	}
	t.Logf("%d generated requests: %v", n, counts)
	for _, k := range []string{"admitted", "refused: delete", "refused: mapping", "refused: finalizers"} {
		if counts[k] == 0 {
			t.Errorf("no generated request was %s: %v", k, counts)
		}
	}
}

func TestGeneratedSameMapper(t *testing.T) {
	m := discoveryMapper(t, kubeAPIServerDiscovery)
	runGenerated(t, 22, 3000, m, m)
}

// TestGeneratedCatalogue maps owner kinds with admitd's schema over the
// server's catalogue on admitd's side and with kube-apiserver's discovery
// on upstream's.
func TestGeneratedCatalogue(t *testing.T) {
	m := discoveryMapper(t, kubeAPIServerDiscovery)
	s := admissionsource.NewSchema(registry.NewCatalogue())
	runGenerated(t, 23, 3000, m, s)
}
