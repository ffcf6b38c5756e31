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

// TestPythonClient drives admitd with the Python kubernetes client (Debian
// package python3-kubernetes, installed by .ci/install-tools).
func TestPythonClient(t *testing.T) {
	python := "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import kubernetes").Run(); err != nil {
		t.Fatalf("%s cannot import kubernetes (run .ci/install-tools): %v", python, err)
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
