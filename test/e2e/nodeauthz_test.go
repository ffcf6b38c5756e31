package e2e

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const kubeletPod = `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
spec:
  nodeName: n1
  containers:
  - name: c
    image: nginx
    envFrom:
    - configMapRef:
        name: settings
  volumes:
  - name: creds
    secret:
      secretName: mounted
`

// Under the default authorization (Node,RBAC) a kubelet reads the secret
// and configmap its pod uses, through kubectl and client-go, and is refused
// other secrets with kube-apiserver's message, and the pod's secret once
// the pod is deleted.
func TestNodeAuthorizerDefault(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	a.MustKubectl(t, "", "create", "secret", "generic", "mounted", "--from-literal=k=v")
	a.MustKubectl(t, "", "create", "secret", "generic", "x", "--from-literal=k=v")
	a.MustKubectl(t, "", "create", "configmap", "settings", "--from-literal=k=v")
	a.MustKubectl(t, kubeletPod, "apply", "-f", "-")
	asKubelet := []string{"--as=system:node:n1", "--as-group=system:nodes"}

	if out := a.MustKubectl(t, "", append(asKubelet, "get", "secret", "mounted", "-o", "name")...); out != "secret/mounted\n" {
		t.Errorf("kubelet getting its pod's secret = %q, want secret/mounted", out)
	}
	_, errOut, err := a.Kubectl(t, "", append(asKubelet, "get", "secret", "x")...)
	// kube-apiserver 1.37's union authorizer prefixes a reason with the
	// authorizer's name ("node: ").
	want := `Error from server (Forbidden): secrets "x" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "default": node: no relationship found between node 'n1' and this object`
	if err == nil || strings.TrimSpace(errOut) != want {
		t.Errorf("kubelet getting another secret: %v, stderr %q, want %q", err, errOut, want)
	}

	cfg := rest.CopyConfig(a.RestConfig(t))
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:node:n1", Groups: []string{"system:nodes"}}
	kubelet := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	if _, err := kubelet.CoreV1().ConfigMaps("default").Get(ctx, "settings", metav1.GetOptions{}); err != nil {
		t.Errorf("kubelet (client-go) getting its pod's configmap: %v", err)
	}
	if _, err := kubelet.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); err == nil {
		t.Error("kubelet listing secrets: allowed, want 403")
	}

	a.MustKubectl(t, "", "delete", "pod", "web", "--wait=false")
	if _, err := kubelet.CoreV1().Secrets("default").Get(ctx, "mounted", metav1.GetOptions{}); err == nil {
		t.Error("kubelet getting the secret of its deleted pod: allowed, want 403")
	}
}
