package evaluate

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/pkg/admission/trace"
)

// A Deployment of a privileged pod into a namespace enforcing restricted:
// the Deployment itself is admitted (with PodSecurity's warning), and
// --expand-workloads shows what the controllers then send: the ReplicaSet,
// admitted, and its Pods, refused by PodSecurity as the ReplicaSet
// controller's creates are on a cluster. Without the flag nothing is
// expanded.
func TestExpandWorkloadsShowsRefusedPods(t *testing.T) {
	objs := objectsOf(t, `apiVersion: v1
kind: Namespace
metadata: {name: team, labels: {pod-security.kubernetes.io/enforce: restricted}}`)
	var deployment map[string]any
	if err := yaml.Unmarshal([]byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx, securityContext: {privileged: true}}]`), &deployment); err != nil {
		t.Fatal(err)
	}
	request := Request{Operation: Create, Object: &unstructured.Unstructured{Object: deployment}}
	plain, err := Run(t.Context(), Input{Objects: objs, Request: request, Server: ServerConfig{AllowPrivileged: true}})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Decision != trace.Allowed || plain.CreatedByControllers != nil {
		t.Fatalf("without the flag: %s %+v, %d expanded; want Allowed and none", plain.Decision, plain.Status, len(plain.CreatedByControllers))
	}
	r, err := Run(t.Context(), Input{Objects: objs, Request: request, Server: ServerConfig{AllowPrivileged: true, ExpandWorkloads: true}})
	if err != nil {
		t.Fatal(err)
	}
	byResource := map[string]ControllerRequest{} // the first group of each resource
	for _, cr := range r.CreatedByControllers {
		if _, ok := byResource[cr.Resource]; !ok {
			byResource[cr.Resource] = cr
		}
	}
	rs, pods := byResource["replicasets.apps"], byResource["pods"]
	if rs.Decision != trace.Allowed || rs.Client != "kube-controller-manager (deployment-controller)" || rs.Count != 1 {
		t.Errorf("the ReplicaSet's create: %+v", rs)
	}
	if pods.Decision != trace.Denied || pods.Client != "kube-controller-manager (replicaset-controller)" ||
		!strings.Contains(pods.Message, `violates PodSecurity "restricted:latest": privileged`) || pods.Count < 2 || pods.Trace == nil {
		t.Errorf("the pods' creates: %+v", pods)
	}
	var out bytes.Buffer
	if err := Write(&out, r, "tree"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "kube-controller-manager (replicaset-controller) created pods in team (") {
		t.Errorf("tree output lacks the pods' line:\n%s", out.String())
	}
}
