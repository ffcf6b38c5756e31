package e2e

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
)

// resizeObjects: a node with one cpu that declares no features, a
// Burstable pod bound to it, and one with pod-level resources.
const resizeObjects = `apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/os: linux}}
status:
  allocatable: {cpu: "1", memory: 4Gi, pods: "110"}
  capacity: {cpu: "1", memory: 4Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  nodeName: n1
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources: {requests: {cpu: 100m, memory: 64Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: plr, namespace: default}
spec:
  nodeName: n1
  resources: {requests: {cpu: 500m, memory: 128Mi}}
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources: {requests: {cpu: 100m, memory: 64Mi}}
`

// resizeWebhook is a mutating webhook on pods/resize that records the cpu
// request of each pod it is sent.
func resizeWebhook(h *webhookServer) string {
	return `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: e2e-resize}
webhooks:
- name: resize.e2e.admitd.io
  clientConfig: {url: "` + h.url + `/resize", caBundle: "` + h.caBundle + `"}
  rules: [{operations: [UPDATE], apiGroups: [""], apiVersions: [v1], resources: [pods/resize]}]
  sideEffects: None
  admissionReviewVersions: [v1]
`
}

type resizeRequests struct {
	mu   sync.Mutex
	seen []string
}

func (r *resizeRequests) handle(_ string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	var pod corev1.Pod
	_ = json.Unmarshal(req.Object.Raw, &pod)
	cpu := ""
	if len(pod.Spec.Containers) > 0 {
		cpu = pod.Spec.Containers[0].Resources.Requests.Cpu().String()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, string(req.Operation)+" "+req.Resource.Resource+"/"+req.SubResource+" "+req.Name+" cpu="+cpu)
	return &admissionv1.AdmissionResponse{Allowed: true}
}

func (r *resizeRequests) has(want string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.seen {
		if s == want {
			return true
		}
	}
	return false
}

// TestKubectlPodResize: kubectl patch --subresource resize changes only a
// container's resources and bumps the generation; a resize that changes the
// QoS class, needs more than the node has, needs a feature the node does
// not declare, or adds a container is refused with kube-apiserver 1.37.2's
// messages (recorded from it); a webhook on pods/resize sees the resize.
func TestKubectlPodResize(t *testing.T) {
	t.Parallel()
	seen := &resizeRequests{}
	hooks := startWebhookServer(t, seen.handle)
	a := startAdmitd(t, t.TempDir())
	a.MustKubectl(t, resizeWebhook(hooks), "apply", "-f", "-")
	a.MustKubectl(t, resizeObjects, "create", "-f", "-")

	// image and labels are not a resize's to change: dropped, as upstream
	out := a.MustKubectl(t, "", "patch", "pod", "p", "--subresource", "resize", "--patch",
		`{"spec":{"containers":[{"name":"c","image":"busybox","resources":{"requests":{"cpu":"200m"}}}]},"metadata":{"labels":{"x":"y"}}}`,
		"-o", "jsonpath={.metadata.generation} {.spec.containers[0].image} {.spec.containers[0].resources.requests.cpu} {.metadata.labels}")
	if want := "2 registry.k8s.io/pause:3.10 200m "; out != want {
		t.Errorf("resized pod = %q, want %q", out, want)
	}
	if !seen.has("UPDATE pods/resize p cpu=200m") {
		t.Errorf("the webhook on pods/resize saw %v, want the resize of p to 200m", seen.seen)
	}
	if got := a.MustKubectl(t, "", "get", "--raw", "/api/v1/namespaces/default/pods/p/resize"); !strings.Contains(got, `"cpu":"200m"`) {
		t.Errorf("GET pods/p/resize = %s, want the pod with its new request", got)
	}

	for _, tc := range []struct {
		name, pod, patchType, patch, want string
	}{
		{"QoS class change", "p", "strategic", `{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"200m","memory":"64Mi"}}}]}}`,
			`The Pod "p" is invalid: spec: Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing`},
		{"PodResizeValidator", "p", "strategic", `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"2"}}}]}}`,
			`Error from server (Forbidden): pods "p" is forbidden: node didn't have enough allocatable resources: cpu, requested: 2000, allocatable: 1000`},
		{"NodeDeclaredFeatureValidator", "plr", "strategic", `{"spec":{"resources":{"requests":{"cpu":"600m"}}}}`,
			`Error from server (Forbidden): pods "plr" is forbidden: pod update requires features InPlacePodLevelResourcesVerticalScaling which are not available on node "n1"`},
		{"container added", "p", "json", `[{"op":"add","path":"/spec/containers/-","value":{"name":"d","image":"x"}}]`,
			`The Pod "p" is invalid: spec.containers: Forbidden: containers may not be added or removed on resize`},
	} {
		_, errOut, err := a.Kubectl(t, "", "patch", "pod", tc.pod, "--subresource", "resize", "--type", tc.patchType, "--patch", tc.patch)
		if err == nil || strings.TrimSpace(errOut) != tc.want {
			t.Errorf("%s: err=%v stderr=%q, want %q", tc.name, err, errOut, tc.want)
		}
	}
	if got := a.MustKubectl(t, "", "get", "pod", "p", "-o", "jsonpath={.metadata.generation} {.spec.containers[0].resources}"); got != `2 {"requests":{"cpu":"200m","memory":"64Mi"}}` {
		t.Errorf("pod after the refused resizes = %s, want generation 2 and the first resize only", got)
	}
}
