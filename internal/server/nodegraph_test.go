package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// asNode is a client of the admin impersonating the kubelet of node.
func asNode(admin *rest.Config, node string) kubernetes.Interface {
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:node:" + node, Groups: []string{"system:nodes"}}
	return kubernetes.NewForConfigOrDie(cfg)
}

// podMounting is a pod bound to node that mounts secret.
func podMounting(name, node, secret string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "i"}},
			Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}}}}
}

func mustCreateSecrets(t *testing.T, c kubernetes.Interface, names ...string) {
	t.Helper()
	for _, name := range names {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := c.CoreV1().Secrets("default").Create(t.Context(), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// A pod created through the server gives its node access to its secret
// when the create returns, and the delete takes it away when it returns.
func TestNodeReadsItsPodsSecretOnceThePodIsCreated(t *testing.T) {
	s, admin := startRBAC(t)
	c := kubernetes.NewForConfigOrDie(admin)
	mustCreateSecrets(t, c, "mounted", "other")
	kubelet := asNode(admin, "n1")
	ctx := t.Context()
	if _, err := kubelet.CoreV1().Secrets("default").Get(ctx, "mounted", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("node reading the secret before its pod exists: %v, want 403", err)
	}
	if _, err := c.CoreV1().Pods("default").Create(ctx, podMounting("p", "n1", "mounted"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kubelet.CoreV1().Secrets("default").Get(ctx, "mounted", metav1.GetOptions{}); err != nil {
		t.Errorf("node reading its pod's secret right after the create: %v", err)
	}
	_, err := kubelet.CoreV1().Secrets("default").Get(ctx, "other", metav1.GetOptions{})
	// The reason carries the authorizer's name, as kube-apiserver 1.37's
	// union (k8s.io/apiserver/pkg/authorization/union) joins them.
	want := `secrets "other" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "default": node: no relationship found between node 'n1' and this object`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("node reading another secret: %v, want %q", err, want)
	}
	if _, err := asNode(admin, "n2").CoreV1().Secrets("default").Get(ctx, "mounted", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("another node reading the secret: %v, want 403", err)
	}
	if err := c.CoreV1().Pods("default").Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kubelet.CoreV1().Secrets("default").Get(ctx, "mounted", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("node reading the secret right after its pod was deleted: %v, want 403", err)
	}
	wantMetrics(t, s, admin,
		`apiserver_authorization_decisions_total{decision="allowed",name="node",type="Node"}`,
		`node_authorizer_graph_actions_duration_seconds_count{operation="AddPod"}`,
		`node_authorizer_graph_actions_duration_seconds_count{operation="DeletePod"}`)
}

// wantMetrics checks that /metrics has each of series.
func wantMetrics(t *testing.T, s *Server, admin *rest.Config, series ...string) {
	t.Helper()
	body := scrape(t, s, admin)
	for _, want := range series {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// A pod written to storage by another server reaches the graph through the
// watch, and so does its delete.
func TestNodeGraphFollowsStorage(t *testing.T) {
	s, admin := startRBAC(t)
	mustCreateSecrets(t, kubernetes.NewForConfigOrDie(admin), "mounted")
	kubelet := asNode(admin, "n1")
	ctx := t.Context()
	data, err := json.Marshal(podMounting("elsewhere", "n1", "mounted"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.store.Create(ctx, "/registry/core/pods/default/elsewhere", data); err != nil {
		t.Fatal(err)
	}
	canRead := func() bool {
		_, err := kubelet.CoreV1().Secrets("default").Get(ctx, "mounted", metav1.GetOptions{})
		return err == nil
	}
	waitFor(t, "the node to read the secret of a pod written to storage", canRead)
	if _, _, err := s.store.Delete(ctx, "/registry/core/pods/default/elsewhere", 0); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the node to lose the secret of the pod deleted from storage", func() bool { return !canRead() })
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A restarted server has the pods of its storage in the graph before it
// serves.
func TestNodeGraphLoadedAtStart(t *testing.T) {
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.KubeconfigOut = t.TempDir(), 0, "-"
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	start := func() (*Server, *rest.Config) {
		s, err := Start(t.Context(), o)
		if err != nil {
			t.Fatal(err)
		}
		return s, &rest.Config{Host: s.URL, QPS: -1, TLSClientConfig: rest.TLSClientConfig{
			CAData: s.CAPEM, CertData: s.AdminCertPEM, KeyData: s.AdminKeyPEM}}
	}
	s, admin := start()
	c := kubernetes.NewForConfigOrDie(admin)
	mustCreateSecrets(t, c, "mounted")
	if _, err := c.CoreV1().Pods("default").Create(t.Context(), podMounting("p", "n1", "mounted"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, admin = start()
	defer s.Close()
	if _, err := asNode(admin, "n1").CoreV1().Secrets("default").Get(t.Context(), "mounted", metav1.GetOptions{}); err != nil {
		t.Errorf("node reading its pod's secret after a restart: %v", err)
	}
}

// A persistent volume bound to the claim of a node's pod gives that node
// access to the volume and to the secret it names, as soon as both writes
// have returned.
func TestNodeReadsTheSecretOfItsPodsVolume(t *testing.T) {
	_, admin := startRBAC(t)
	c := kubernetes.NewForConfigOrDie(admin)
	mustCreateSecrets(t, c, "csi-creds")
	ctx := t.Context()
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "vol"}, Spec: corev1.PersistentVolumeSpec{
		Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		ClaimRef:    &corev1.ObjectReference{Namespace: "default", Name: "claim"},
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h",
			NodePublishSecretRef: &corev1.SecretReference{Namespace: "default", Name: "csi-creds"}}}}}
	if _, err := c.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := podMounting("p", "n1", "unused")
	pod.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "claim"}}}}
	if _, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubelet := asNode(admin, "n1")
	if _, err := kubelet.CoreV1().Secrets("default").Get(ctx, "csi-creds", metav1.GetOptions{}); err != nil {
		t.Errorf("node reading the secret of its pod's volume: %v", err)
	}
	if err := c.CoreV1().PersistentVolumes().Delete(ctx, "vol", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The volume holds the pv-protection finalizer until the controller,
	// seeing it unbound, removes it.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, err := c.CoreV1().PersistentVolumes().Get(ctx, "vol", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET the deleted volume after 5s: %v, want it gone", err)
		}
	}
	// The volume is gone from storage before the controller's write that
	// removed it has returned (and told the graph): the 403 may take an
	// instant more, as on a cluster, where the graph follows informers.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, err := kubelet.CoreV1().Secrets("default").Get(ctx, "csi-creds", metav1.GetOptions{})
		if apierrors.IsForbidden(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node reading the secret of a deleted volume after 5s: %v, want 403", err)
		}
	}
}
