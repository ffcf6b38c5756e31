package e2e

import (
	"strings"
	"testing"
)

// workloadWarned is a Deployment whose name is not a DNS label and whose
// template selects on a deprecated node label and keeps a deprecated
// annotation; the image is filled in per apply.
const workloadWarned = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web.v1, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
      annotations: {scheduler.alpha.kubernetes.io/critical-pod: ""}
    spec:
      nodeSelector: {beta.kubernetes.io/os: linux}
      containers:
      - name: app
        image: IMAGE
        env: [{name: X, value: a}, {name: X, value: b}]
`

// TestKubectlWorkloadWarnings: kubectl apply of a Deployment prints
// kube-apiserver 1.37.2's warnings for its name and template (recorded
// from the real server) on create, the template's again on an apply that
// changes the template or an annotation, and none on one that changes
// nothing; a Pod's create warns about its AppArmor annotation.
func TestKubectlWorkloadWarnings(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	template := `Warning: spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead
Warning: spec.template.metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+; use the "priorityClassName" field instead
Warning: spec.template.spec.containers[0].env[1]: hides previous definition of "X", which may be dropped when using apply
`
	for _, step := range []struct {
		image, stdout, stderr string
	}{
		{"nginx:1", "deployment.apps/web.v1 created\n", "Warning: metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; " +
			"a DNS label is recommended: [must not contain dots]\n" + template},
		{"nginx:2", "deployment.apps/web.v1 configured\n", template},
		{"nginx:2", "deployment.apps/web.v1 unchanged\n", ""},
	} {
		out, errOut, err := a.Kubectl(t, strings.ReplaceAll(workloadWarned, "IMAGE", step.image), "apply", "-f", "-")
		if err != nil || out != step.stdout || errOut != step.stderr {
			t.Errorf("kubectl apply (image %s): %v\nstdout %q\nstderr\n%s\nwant stdout %q, stderr\n%s", step.image, err, out, errOut, step.stdout, step.stderr)
		}
	}
	// an update of the annotations alone bumps a Deployment's generation,
	// hence warns again
	out, errOut, err := a.Kubectl(t, "", "annotate", "deployment", "web.v1", "foo=bar")
	if err != nil || out != "deployment.apps/web.v1 annotated\n" || errOut != template {
		t.Errorf("kubectl annotate: %v\nstdout %q\nstderr\n%s\nwant stderr\n%s", err, out, errOut, template)
	}
	// a Pod warns about its AppArmor annotation while it is copied into the
	// container's field, before the name
	out, errOut, err = a.Kubectl(t, appArmorPod, "apply", "-f", "-")
	podWarnings := `Warning: metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]: deprecated since v1.30; use the "appArmorProfile" field instead
Warning: metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]
`
	if err != nil || out != "pod/aa.pod created\n" || errOut != podWarnings {
		t.Errorf("kubectl apply of a Pod: %v\nstdout %q\nstderr\n%s\nwant stderr\n%s", err, out, errOut, podWarnings)
	}
}

const appArmorPod = `apiVersion: v1
kind: Pod
metadata:
  name: aa.pod
  namespace: default
  annotations: {container.apparmor.security.beta.kubernetes.io/app: runtime/default}
spec:
  containers: [{name: app, image: nginx}]
`
