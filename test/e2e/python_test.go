package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pythonClientScript lists, creates and watches with the official Python
// kubernetes client.
const pythonClientScript = `
import sys
from kubernetes import client, config, watch
config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
print("namespaces:", ",".join(sorted(n.metadata.name for n in v1.list_namespace().items)))
v1.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="from-python"), data={"k": "v"}))
w = watch.Watch()
for ev in w.stream(v1.list_namespaced_config_map, "default", timeout_seconds=5):
    if ev["object"].metadata.name == "from-python":
        print("watched:", ev["type"], ev["object"].data["k"])
        w.stop()
`

// TestPythonClient drives admitd with the Python kubernetes client. Without
// it the test skips, except in CI (CI=true), where it fails.
func TestPythonClient(t *testing.T) {
	t.Parallel()
	python := pythonWithClient()
	if python == "" {
		msg := "no python3 on PATH can import kubernetes: install the Python client " +
			"(Debian: apt-get install python3-kubernetes, as .ci/install-tools does; or pip install kubernetes)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	a := startAdmitd(t, t.TempDir())
	script := filepath.Join(t.TempDir(), "client.py")
	if err := os.WriteFile(script, []byte(pythonClientScript), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(python, script, a.Kubeconfig).CombinedOutput()
	if err != nil {
		t.Fatalf("python client: %v\n%s", err, out)
	}
	for _, want := range []string{"namespaces: default,kube-node-lease,kube-public,kube-system", "watched: ADDED v"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("python client output lacks %q:\n%s", want, out)
		}
	}
}

// pythonWithClient is the first python3 on PATH that can import kubernetes
// (the first python3 may be a pyenv shim without it), or "".
func pythonWithClient() string {
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		python := filepath.Join(dir, "python3")
		if !filepath.IsAbs(python) {
			continue
		}
		if exec.Command(python, "-c", "import kubernetes").Run() == nil {
			return python
		}
	}
	return ""
}
