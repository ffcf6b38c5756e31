package e2e

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi3"
)

const twoContainerDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  namespace: default
spec:
  replicas: 1
  selector:
    matchLabels: {app: app}
  template:
    metadata:
      labels: {app: app}
    spec:
      containers:
      - name: main
        image: busybox:MAIN
      - name: side
        image: busybox:1.36
`

const badPod = `apiVersion: v1
kind: Pod
metadata:
  name: bad
  namespace: default
spec:
  bogusField: 1
  containers:
  - name: c
    image: busybox
    imagePullPolicyX: Always
`

const cronTabCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            description: The desired schedule.
            required: [cronSpec]
            properties:
              cronSpec: {type: string, description: A cron expression.}
`

// TestOpenAPIKubectl drives the kubectl commands that read the OpenAPI
// documents: explain (v3 components.schemas), client-side apply (strategic
// merge metadata from v3) and create -f (the fieldValidation check).
func TestOpenAPIKubectl(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	t.Run("explain a nested field", func(t *testing.T) { openAPIExplainField(t, a) })
	t.Run("explain recursive", func(t *testing.T) { openAPIExplainRecursive(t, a) })
	t.Run("client-side apply merges containers by name", func(t *testing.T) { openAPIClientSideApply(t, a) })
	t.Run("create with unknown fields prints the strict error", func(t *testing.T) { openAPIStrictCreate(t, a) })
	t.Run("custom resource documents follow the CRD", func(t *testing.T) { openAPICustomResource(t, a) })
	t.Run("client-go reads v2 protobuf and v3", func(t *testing.T) { openAPIClientGo(t, a) })
}

// explain reads components.schemas of the v3 document.
func openAPIExplainField(t *testing.T, a *admitd) {
	out := a.MustKubectl(t, "", "explain", "pods.spec.containers")
	for _, want := range []string{"KIND:       Pod", "FIELD: containers <[]Container>", "name\t<string> -required-", "ports\t<[]ContainerPort>"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl explain pods.spec.containers lacks %q:\n%s", want, out)
		}
	}
}

// explain --recursive walks every schema the kind refers to.
func openAPIExplainRecursive(t *testing.T, a *admitd) {
	out := a.MustKubectl(t, "", "explain", "deployment", "--recursive")
	head := strings.Join(strings.SplitN(out, "\n", 12)[:11], "\n")
	for _, want := range []string{"GROUP:      apps", "KIND:       Deployment", "VERSION:    v1", "Deployment enables declarative updates", "metadata\t<ObjectMeta>"} {
		if !strings.Contains(head, want) {
			t.Errorf("kubectl explain deployment --recursive | head lacks %q:\n%s", want, head)
		}
	}
}

// A changed image in a two-container template keeps both containers: the
// strategic merge patch is built from the v3 document (merge key name),
// without falling back to /openapi/v2.
func openAPIClientSideApply(t *testing.T, a *admitd) {
	first := strings.Replace(twoContainerDeployment, "MAIN", "1.36", 1)
	if out := a.MustKubectl(t, first, "apply", "-f", "-"); !strings.Contains(out, "deployment.apps/app created") {
		t.Fatalf("first apply = %q, want created", out)
	}
	second := strings.Replace(twoContainerDeployment, "MAIN", "1.37", 1)
	out, errOut, err := a.Kubectl(t, second, "apply", "-f", "-", "-v=8")
	if err != nil || !strings.Contains(out, "deployment.apps/app configured") {
		t.Fatalf("second apply: err=%v stdout=%q", err, out)
	}
	// The patch is built from the v3 document: no fall back to v2.
	for _, want := range []string{"/openapi/v3/apis/apps/v1?hash=", "Content-Type: application/strategic-merge-patch+json", `$setElementOrder/containers`} {
		if !strings.Contains(errOut, want) {
			t.Errorf("apply -v=8 log lacks %q", want)
		}
	}
	if strings.Contains(errOut, "/openapi/v2") {
		t.Errorf("apply fetched /openapi/v2: the v3 patch metadata was not usable")
	}
	images := a.MustKubectl(t, "", "get", "deploy", "app", "-o", `jsonpath={range .spec.template.spec.containers[*]}{.name}={.image} {end}`)
	if images != "main=busybox:1.37 side=busybox:1.36 " {
		t.Errorf("containers after the second apply = %q, want main=busybox:1.37 side=busybox:1.36", images)
	}
}

// The fieldValidation check passes on the v3 document, so kubectl relies on
// the server, which rejects unknown fields.
func openAPIStrictCreate(t *testing.T, a *admitd) {
	_, errOut, err := a.Kubectl(t, badPod, "create", "-f", "-")
	want := `Error from server (BadRequest): error when creating "STDIN": `
	fields := `strict decoding error: unknown field "spec.bogusField", unknown field "spec.containers[0].imagePullPolicyX"`
	if err == nil || !strings.Contains(errOut, want) || !strings.Contains(errOut, fields) {
		t.Errorf("create bad pod: err=%v stderr=%q, want %q ... %q", err, errOut, want, fields)
	}
}

// A CRD's schema is published as soon as the CRD is created.
func openAPICustomResource(t *testing.T, a *admitd) {
	a.MustKubectl(t, cronTabCRD, "apply", "-f", "-")
	out := a.MustKubectl(t, "", "explain", "crontabs.spec")
	for _, want := range []string{"GROUP:      stable.example.com", "The desired schedule.", "cronSpec\t<string> -required-"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl explain crontabs.spec lacks %q:\n%s", want, out)
		}
	}
}

// client-go decodes /openapi/v2 as gnostic protobuf and lists the v3 index.
func openAPIClientGo(t *testing.T, a *admitd) {
	dc := discovery.NewDiscoveryClientForConfigOrDie(a.RestConfig(t))
	v2, err := dc.OpenAPISchema()
	if err != nil {
		t.Fatalf("OpenAPISchema (v2 protobuf): %v", err)
	}
	if n := len(v2.GetDefinitions().GetAdditionalProperties()); n < 400 {
		t.Errorf("v2 document has %d definitions, want every built-in type", n)
	}
	paths, err := dc.OpenAPIV3().Paths()
	if err != nil {
		t.Fatalf("OpenAPIV3 paths: %v", err)
	}
	gv, ok := paths["apis/stable.example.com/v1"]
	if !ok {
		t.Fatalf("v3 index lacks apis/stable.example.com/v1: %v", paths)
	}
	if _, err := gv.Schema("application/json"); err != nil {
		t.Errorf("v3 apis/stable.example.com/v1: %v", err)
	}
	// The index also lists the discovery endpoints' documents (apis/apps,
	// version, ...), which the openapi3 root leaves out of its group-versions.
	group, ok := paths["apis/apps"]
	if !ok {
		t.Fatalf("v3 index lacks apis/apps: %v", paths)
	}
	doc, err := group.Schema("application/json")
	if err != nil || !strings.Contains(string(doc), `"operationId":"getAppsAPIGroup"`) {
		t.Errorf("v3 apis/apps = %.200s, %v; want the document of GET /apis/apps/", doc, err)
	}
	root := openapi3.NewRoot(dc.OpenAPIV3())
	gvs, err := root.GroupVersions()
	if err != nil || len(gvs) == 0 || len(gvs) >= len(paths) {
		t.Fatalf("openapi3 root: %d group-versions of %d paths, %v", len(gvs), len(paths), err)
	}
	if _, err := root.GVSpec(schema.GroupVersion{Group: "apps", Version: "v1"}); err != nil {
		t.Errorf("openapi3 root GVSpec(apps/v1): %v", err)
	}
}
