package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/admitd/admitd/internal/serviceaccount"
)

// seenRequests records what a webhook was asked: "OP resource/sub group/version.Kind name".
type seenRequests struct {
	mu   sync.Mutex
	seen []string
}

func (s *seenRequests) handle(_ string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, fmt.Sprintf("%s %s/%s %s/%s.%s %s", req.Operation, req.Resource.Resource, req.SubResource,
		req.Kind.Group, req.Kind.Version, req.Kind.Kind, req.Name))
	return &admissionv1.AdmissionResponse{Allowed: true}
}

func (s *seenRequests) has(want string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.seen, want)
}

func subresourceWebhook(h *webhookServer) string {
	return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: e2e-subresources}
webhooks:
- name: subresources.e2e.admitd.io
  clientConfig: {url: "` + h.url + `/validate", caBundle: "` + h.caBundle + `"}
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods/binding, pods/eviction, serviceaccounts/token]}]
  sideEffects: None
  admissionReviewVersions: [v1]
`
}

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestKubectlCreateTokenInNewNamespace(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	seen := &seenRequests{}
	a.MustKubectl(t, subresourceWebhook(startWebhookServer(t, seen.handle)), "apply", "-f", "-")
	a.MustKubectl(t, "", "create", "namespace", "tokens")
	waitFor(t, "the namespace has its default service account", func() bool {
		_, _, err := a.Kubectl(t, "", "get", "serviceaccount", "default", "-n", "tokens")
		return err == nil
	})
	token := strings.TrimSpace(a.MustKubectl(t, "", "create", "token", "default", "-n", "tokens", "--audience=vault"))

	key, err := serviceaccount.LoadOrCreateKey(filepath.Join(a.DataDir, "pki", serviceaccount.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	issuer, err := serviceaccount.NewIssuer(key, serviceaccount.DefaultIssuer)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := issuer.Verify(token)
	if err != nil {
		t.Fatalf("the token does not verify with the data directory's key: %v", err)
	}
	k8s, _ := claims["kubernetes.io"].(map[string]any)
	sa, _ := k8s["serviceaccount"].(map[string]any)
	uid := a.MustKubectl(t, "", "get", "serviceaccount", "default", "-n", "tokens", "-o", "jsonpath={.metadata.uid}")
	if claims["sub"] != "system:serviceaccount:tokens:default" || claims["iss"] != serviceaccount.DefaultIssuer ||
		fmt.Sprint(claims["aud"]) != "[vault]" || sa["uid"] != uid {
		t.Errorf("token claims = %v, want the default service account of tokens (uid %s) for vault", claims, uid)
	}
	if want := "CREATE serviceaccounts/token authentication.k8s.io/v1.TokenRequest default"; !seen.has(want) {
		t.Errorf("the webhook saw %v, want %q", seen.seen, want)
	}
	_, errOut, err := a.Kubectl(t, "", "create", "token", "default", "-n", "tokens", "--duration=1m")
	if want := `spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes`; err == nil || !strings.Contains(errOut, want) {
		t.Errorf("kubectl create token --duration=1m: err=%v stderr=%q, want %q", err, errOut, want)
	}
}

func TestPodBindingAndEviction(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	seen := &seenRequests{}
	a.MustKubectl(t, subresourceWebhook(startWebhookServer(t, seen.handle)), "apply", "-f", "-")
	a.MustKubectl(t, "apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\n", "apply", "-f", "-")
	for _, p := range []string{"web", "api"} {
		a.MustKubectl(t, "", "run", p, "--image=nginx")
	}
	cs := kubernetes.NewForConfigOrDie(a.RestConfig(t))
	ctx := context.Background()
	for _, p := range []string{"web", "api"} {
		b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}
		if err := cs.CoreV1().Pods("default").Bind(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatalf("binding %s: %v", p, err)
		}
	}
	if got := a.MustKubectl(t, "", "get", "pod", "web", "-o", "jsonpath={.spec.nodeName}"); got != "node-1" {
		t.Errorf("bound pod's nodeName = %q, want node-1", got)
	}
	err := cs.CoreV1().Pods("default").Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Target: corev1.ObjectReference{Name: "node-2"}}, metav1.CreateOptions{})
	if want := `Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "node-1"`; !apierrors.IsConflict(err) || err.Error() != want {
		t.Errorf("binding a bound pod: %v, want the Conflict %q", err, want)
	}

	// A single eviction through client-go, then kubectl drain evicts the rest.
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "default"}}
	if err := cs.PolicyV1().Evictions("default").Evict(ctx, ev); err != nil {
		t.Fatalf("evicting api: %v", err)
	}
	out := a.MustKubectl(t, "", "drain", "node-1", "--force", "--timeout=30s")
	if !strings.Contains(out, "pod/web evicted") || !strings.Contains(out, "node/node-1 drained") {
		t.Errorf("kubectl drain = %q, want web evicted and the node drained", out)
	}
	if out := a.MustKubectl(t, "", "get", "pods", "-o", "name"); out != "" {
		t.Errorf("pods after the drain: %q, want none", out)
	}
	for _, want := range []string{
		"CREATE pods/binding /v1.Binding web",
		"CREATE pods/eviction policy/v1.Eviction api",
		"CREATE pods/eviction policy/v1.Eviction web",
	} {
		if !seen.has(want) {
			t.Errorf("the webhook saw %v, want %q", seen.seen, want)
		}
	}
}
