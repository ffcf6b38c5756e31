package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestKubeadmPluginsOnAPod runs the built binary with kubeadm's flags
// (--enable-admission-plugins=NodeRestriction --allow-privileged=true) and
// kubectl: in a namespace with a LimitRange, a PriorityClass and the
// restricted Pod Security level, a compliant pod is stored as the real
// kube-apiserver 1.37.2 stores it (testdata/plugins/kas-pod.json, recorded by
// testdata/plugins/record-kas.sh), a privileged pod is refused with its
// message, and a mutating webhook receives the pod with the compiled-in
// plugins' changes already made.
func TestKubeadmPluginsOnAPod(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen *corev1.Pod
	hooks := startWebhookServer(t, func(_ string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		var pod corev1.Pod
		if err := json.Unmarshal(req.Object.Raw, &pod); err == nil && req.Namespace == "shop" && pod.Name == "web" {
			mu.Lock()
			seen = &pod
			mu.Unlock()
		}
		return &admissionv1.AdmissionResponse{Allowed: true}
	})
	dir := t.TempDir()
	a := startAdmitd(t, filepath.Join(dir, "data"), "--enable-admission-plugins=NodeRestriction", "--allow-privileged=true")
	a.MustKubectl(t, "", "apply", "-f", "testdata/plugins/setup.yaml")
	waitForKubectl(t, a, "-n", "shop", "get", "serviceaccount", "default")
	a.MustKubectl(t, observingWebhook(hooks), "apply", "-f", "-")

	a.MustKubectl(t, "", "create", "-f", "testdata/plugins/compliant-pod.yaml")
	stored := a.MustKubectl(t, "", "-n", "shop", "get", "pod", "web", "-o", "json")
	want, err := os.ReadFile("testdata/plugins/kas-pod.json")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := normalisedPod(t, []byte(stored)), normalisedPod(t, want); !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("stored pod differs from kube-apiserver's\n got: %s\nwant: %s", g, w)
	}

	privileged, err := os.ReadFile("testdata/plugins/privileged-pod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, errOut, err := a.Kubectl(t, string(privileged), "create", "-f", "-")
	wantErr, rerr := os.ReadFile("testdata/plugins/kas-privileged.txt")
	if rerr != nil {
		t.Fatal(rerr)
	}
	if err == nil || strings.TrimSpace(stripSkewWarning(errOut)) != strings.TrimSpace(string(wantErr)) {
		t.Errorf("privileged pod: err=%v\n got: %s\nwant: %s", err, errOut, wantErr)
	}

	mu.Lock()
	defer mu.Unlock()
	if seen == nil {
		t.Fatal("the mutating webhook saw no pod")
	}
	var storedPod corev1.Pod
	if err := json.Unmarshal([]byte(stored), &storedPod); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seen.Spec, storedPod.Spec) || seen.Annotations["kubernetes.io/limit-ranger"] == "" {
		g, _ := json.MarshalIndent(seen.Spec, "", "  ")
		t.Errorf("the webhook received a pod without the plugins' changes: spec %s, annotations %v", g, seen.Annotations)
	}
}

// observingWebhook is a mutating webhook on the pods of namespace shop that
// changes nothing.
func observingWebhook(h *webhookServer) string {
	return `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: e2e-observe}
webhooks:
- name: observe.e2e.admitd.io
  clientConfig: {url: "` + h.url + `/observe", caBundle: "` + h.caBundle + `"}
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: shop}}
  sideEffects: None
  admissionReviewVersions: [v1]
`
}

// waitForKubectl retries a kubectl command for up to 10 seconds.
func waitForKubectl(t *testing.T, a *admitd, args ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, errOut, err := a.Kubectl(t, "", args...)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl %v: %v: %s", args, err, errOut)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var tokenVolumeSuffix = regexp.MustCompile(`kube-api-access-[a-z0-9]{5}`)

// normalisedPod is a stored pod without what differs between any two
// servers: uid, resourceVersion, timestamps, managedFields, and the random
// suffix of the token volume's name.
func normalisedPod(t *testing.T, data []byte) map[string]any {
	t.Helper()
	data = tokenVolumeSuffix.ReplaceAll(data, []byte("kube-api-access-XXXXX"))
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	meta := m["metadata"].(map[string]any)
	for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields"} {
		delete(meta, k)
	}
	return m
}
