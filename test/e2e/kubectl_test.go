package e2e

import (
	"strings"
	"testing"
)

const podManifest = `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: team-a
  labels:
    app: web
spec:
  containers:
  - name: nginx
    image: nginx:1.27
`

const deploymentManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: team-a
spec:
  replicas: 2
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
      - name: api
        image: example.com/api:v1
`

func TestKubectlLifecycle(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())

	steps := []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"create namespace (protobuf body)", "", []string{"create", "namespace", "team-a"}, "namespace/team-a created"},
		{"create configmap (protobuf body)", "", []string{"create", "configmap", "settings", "-n", "team-a", "--from-literal=mode=fast"}, "configmap/settings created"},
		{"create secret", "", []string{"create", "secret", "generic", "token", "-n", "team-a", "--from-literal=t=abc"}, "secret/token created"},
		{"create pod -f", podManifest, []string{"create", "-f", "-"}, "pod/web created"},
		{"create deployment -f", deploymentManifest, []string{"apply", "-f", "-"}, "deployment.apps/api created"},
		{"create deployment generator", "", []string{"create", "deployment", "cache", "-n", "team-a", "--image=redis:7"}, "deployment.apps/cache created"},
		{"get configmap", "", []string{"get", "configmap", "settings", "-n", "team-a", "-o", "jsonpath={.data.mode}"}, "fast"},
		{"get pods", "", []string{"get", "pods", "-n", "team-a"}, "web"},
		{"get deployments wide", "", []string{"get", "deploy", "-n", "team-a", "-o", "name"}, "deployment.apps/api"},
		{"label", "", []string{"label", "configmap", "settings", "-n", "team-a", "tier=gold"}, "configmap/settings labeled"},
		{"label selector", "", []string{"get", "cm", "-n", "team-a", "-l", "tier=gold", "-o", "name"}, "configmap/settings"},
		{"annotate", "", []string{"annotate", "configmap", "settings", "-n", "team-a", "note=hi"}, "configmap/settings annotated"},
		{"apply unchanged", deploymentManifest, []string{"apply", "-f", "-"}, "deployment.apps/api unchanged"},
		{"describe", "", []string{"describe", "configmap", "settings", "-n", "team-a"}, "tier=gold"},
		{"dry-run create", "", []string{"create", "configmap", "ghost", "-n", "team-a", "--dry-run=server"}, "configmap/ghost created (server dry run)"},
		{"delete configmap", "", []string{"delete", "configmap", "settings", "-n", "team-a"}, `configmap "settings" deleted`},
	}
	for _, st := range steps {
		out := a.MustKubectl(t, st.stdin, st.args...)
		if !strings.Contains(out, st.want) {
			t.Fatalf("%s: kubectl %s = %q, want it to contain %q", st.name, strings.Join(st.args, " "), out, st.want)
		}
	}
	if out, _, err := a.Kubectl(t, "", "get", "configmap", "ghost", "-n", "team-a"); err == nil {
		t.Fatalf("dry-run configmap was stored: %s", out)
	}
	_, errOut, err := a.Kubectl(t, "", "get", "configmap", "settings", "-n", "team-a")
	if err == nil || !strings.Contains(errOut, `configmaps "settings" not found`) {
		t.Fatalf("get deleted configmap: err=%v stderr=%q, want NotFound", err, errOut)
	}
}

func TestKubectlDefaultingAndValidation(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	a.MustKubectl(t, "", "create", "namespace", "team-a")
	a.MustKubectl(t, podManifest, "create", "-f", "-")
	policy := a.MustKubectl(t, "", "get", "pod", "web", "-n", "team-a", "-o", "jsonpath={.spec.restartPolicy}/{.spec.containers[0].terminationMessagePath}")
	if policy != "Always//dev/termination-log" {
		t.Errorf("defaulted pod fields = %q, want Always//dev/termination-log", policy)
	}
	bad := strings.Replace(podManifest, "name: web", "name: Web_Bad", 1)
	_, errOut, err := a.Kubectl(t, bad, "create", "-f", "-")
	want := `The Pod "Web_Bad" is invalid: metadata.name: Invalid value: "Web_Bad"`
	if err == nil || !strings.Contains(errOut, want) {
		t.Errorf("create invalid pod: err=%v stderr=%q, want it to contain %q", err, errOut, want)
	}
	_, errOut, err = a.Kubectl(t, "", "create", "namespace", "team-a")
	if err == nil || !strings.Contains(errOut, `namespaces "team-a" already exists`) {
		t.Errorf("create existing namespace: err=%v stderr=%q, want AlreadyExists", err, errOut)
	}
}

func TestKubectlGetEveryResource(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	resources := []string{"namespaces", "pods", "configmaps", "secrets", "services", "endpoints", "serviceaccounts",
		"limitranges", "resourcequotas", "events", "nodes", "persistentvolumes", "persistentvolumeclaims",
		"replicationcontrollers", "deployments", "replicasets", "statefulsets", "daemonsets", "jobs", "cronjobs",
		"endpointslices", "ingresses", "ingressclasses", "networkpolicies", "storageclasses", "priorityclasses",
		"runtimeclasses", "leases", "roles", "rolebindings", "clusterroles", "clusterrolebindings",
		"certificatesigningrequests", "clustertrustbundles", "podcertificaterequests", "poddisruptionbudgets", "mutatingwebhookconfigurations",
		"validatingwebhookconfigurations", "validatingadmissionpolicies", "validatingadmissionpolicybindings",
		"mutatingadmissionpolicies", "mutatingadmissionpolicybindings", "events.events.k8s.io", "flowschemas", "prioritylevelconfigurations",
		"csidrivers", "csinodes", "csistoragecapacities", "volumeattachments", "volumeattributesclasses", "servicecidrs", "ipaddresses",
		"deviceclasses", "devicetaintrules", "resourceclaims", "resourceclaimtemplates", "resourceslices", "apiservices",
		"storageversionmigrations"}
	for _, r := range resources {
		if _, errOut, err := a.Kubectl(t, "", "get", r, "-A"); err != nil {
			t.Errorf("kubectl get %s -A: %v: %s", r, err, errOut)
		}
	}
}

func TestKubectlNoChangeWrites(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	a.MustKubectl(t, "", "create", "configmap", "same", "--from-literal=k=v")
	a.MustKubectl(t, "", "label", "configmap", "same", "tier=gold")
	rv := a.MustKubectl(t, "", "get", "configmap", "same", "-o", "jsonpath={.metadata.resourceVersion}")
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"label", "configmap", "same", "tier=gold"}, "configmap/same not labeled"},
		{[]string{"patch", "configmap", "same", "-p", `{"data":{"k":"v"}}`}, "configmap/same patched (no change)"},
		{[]string{"patch", "configmap", "same", "--type=merge", "-p", `{"data":{"k":"v"}}`}, "configmap/same patched (no change)"},
		{[]string{"patch", "configmap", "same", "--type=json", "-p", `[{"op":"replace","path":"/data/k","value":"v"}]`}, "configmap/same patched (no change)"},
	}
	for _, st := range steps {
		if out := a.MustKubectl(t, "", st.args...); !strings.Contains(out, st.want) {
			t.Errorf("kubectl %s = %q, want %q", strings.Join(st.args, " "), out, st.want)
		}
	}
	if got := a.MustKubectl(t, "", "get", "configmap", "same", "-o", "jsonpath={.metadata.resourceVersion}"); got != rv {
		t.Errorf("resourceVersion after no-op writes = %s, want unchanged %s", got, rv)
	}
}

func TestKubectlAuthWhoamiCanI(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	if out := a.MustKubectl(t, "", "auth", "whoami"); !strings.Contains(out, "admitd-admin") || !strings.Contains(out, "system:masters") {
		t.Errorf("kubectl auth whoami = %q, want the admin user and its groups", out)
	}
	if out := a.MustKubectl(t, "", "auth", "can-i", "create", "pods"); strings.TrimSpace(out) != "yes" {
		t.Errorf("kubectl auth can-i create pods = %q, want yes (AlwaysAllow)", out)
	}
}

func TestKubectlScale(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	a.MustKubectl(t, "", "create", "deployment", "web", "--image=nginx", "--replicas=2")
	if out := a.MustKubectl(t, "", "scale", "deployment", "web", "--replicas=5"); !strings.Contains(out, "deployment.apps/web scaled") {
		t.Fatalf("kubectl scale = %q", out)
	}
	if got := a.MustKubectl(t, "", "get", "deploy", "web", "-o", "jsonpath={.spec.replicas}/{.metadata.generation}"); got != "5/2" {
		t.Errorf("after scale replicas/generation = %q, want 5/2", got)
	}
	_, errOut, err := a.Kubectl(t, "", "patch", "deploy", "web", "--subresource=scale", "--type=merge", "-p", `{"spec":{"replicas":-3}}`)
	if want := `The Scale "web" is invalid: spec.replicas: Invalid value: -3: must be greater than or equal to 0`; err == nil || !strings.Contains(errOut, want) {
		t.Errorf("negative scale: err=%v stderr=%q, want %q", err, errOut, want)
	}
}
