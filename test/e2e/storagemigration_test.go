package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// svmTranscript is what kube-apiserver 1.37.2 (without
// kube-controller-manager, so that no migrator writes the status) printed
// for svmSteps.
const svmTranscript = "testdata/storagemigration/kube-apiserver.txt"

// svmCondition is a status condition of a StorageVersionMigration as a
// merge patch writes it.
func svmCondition(typ, status, reason string) string {
	return fmt.Sprintf(`{"type":%q,"status":%q,"reason":%q,"message":"","lastTransitionTime":"2026-01-02T03:04:05Z"}`, typ, status, reason)
}

func svmStatusPatch(status string) []string {
	return []string{"patch", "storageversionmigration", "migrate-secrets", "--subresource=status", "--type=merge", "-p", status}
}

// svmSteps are the kubectl commands of TestKubectlStorageVersionMigrations,
// each with its stdin file (in testdata/storagemigration) or none.
var svmSteps = []struct {
	stdin string
	args  []string
}{
	{"objects.yaml", []string{"apply", "-f", "-"}},
	{"", []string{"get", "storageversionmigrations"}},
	{"", []string{"get", "storageversionmigration", "migrate-secrets", "-o", "name"}},
	{"", []string{"api-resources", "--api-group=storagemigration.k8s.io", "-o", "wide"}},
	{"", []string{"get", "storageversionmigrations", "-o", "jsonpath={range .items[*]}{.metadata.name} {.spec} {.status}{\"\\n\"}{end}"}},
	{"bad.yaml", []string{"create", "-f", "-"}},
	{"", []string{"patch", "storageversionmigration", "migrate-secrets", "--type=merge", "-p", `{"spec":{"resource":{"group":"apps"}}}`}},
	{"", svmStatusPatch(`{"status":{"resourceVersion":"280","conditions":[` + svmCondition("Running", "True", "MigrationRunning") + `]}}`)},
	{"", []string{"get", "storageversionmigration", "migrate-secrets"}},
	{"", svmStatusPatch(`{"status":{"resourceVersion":"0281"}}`)},
	{"", svmStatusPatch(`{"status":{"conditions":[` + svmCondition("Succeeded", "True", "Done") + "," + svmCondition("Failed", "True", "Broken") + `]}}`)},
	{"", svmStatusPatch(`{"status":{"conditions":[` + svmCondition("Running", "Maybe", "bad reason!") + `]}}`)},
	{"", svmStatusPatch(`{"metadata":{"labels":{"a":"b"}},"spec":{"resource":{"group":"apps"}},"status":{"conditions":[` +
		svmCondition("Running", "False", "MigrationCompleted") + "," + svmCondition("Succeeded", "True", "Done") + `]}}`)},
	{"", []string{"get", "storageversionmigrations"}},
	{"", svmStatusPatch(`{"status":{"conditions":[` + svmCondition("Succeeded", "False", "Undone") + `]}}`)},
	{"", []string{"label", "storageversionmigration", "migrate-secrets", "a=b"}},
	{"", []string{"get", "storageversionmigration", "migrate-secrets", "-o", "jsonpath={.metadata.labels} {.spec} {.status.resourceVersion} {.status.conditions[*].type}"}},
	{"", []string{"delete", "storageversionmigration", "migrate-secrets", "migrate-deployments"}},
}

// TestKubectlStorageVersionMigrations: kubectl applies, lists, patches
// (spec, status through --subresource=status) and deletes
// StorageVersionMigrations and prints what it printed for kube-apiserver
// 1.37.2 (svmTranscript): the table without an Age column, Unknown until a
// condition is True, the status a create drops, discovery, the errors of
// invalid objects, of a spec change and of invalid status writes, a status
// write that keeps the spec and labels.
//
// With KAS_KUBECONFIG set, the steps run against that server instead and
// rewrite the transcript (record from a fresh kube-apiserver without
// kube-controller-manager; admitd runs without its migrator likewise).
func TestKubectlStorageVersionMigrations(t *testing.T) {
	t.Parallel()
	record := os.Getenv("KAS_KUBECONFIG")
	var a *admitd
	if record != "" {
		a = &admitd{Kubeconfig: record}
	} else {
		a = startAdmitd(t, t.TempDir(), "--controllers=*,-storage-version-migrator-controller")
	}
	got := svmRun(t, a)
	if record != "" {
		if err := os.WriteFile(svmTranscript, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(svmTranscript)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("kubectl transcript differs from kube-apiserver 1.37.2's:\n%s", lineDiff(string(want), got))
	}
}

// svmRun runs svmSteps and returns the transcript: each command, then what
// it printed on stdout and stderr, and its exit status when it failed.
func svmRun(t *testing.T, a *admitd) string {
	t.Helper()
	var b strings.Builder
	for _, st := range svmSteps {
		stdin := ""
		if st.stdin != "" {
			data, err := os.ReadFile("testdata/storagemigration/" + st.stdin)
			if err != nil {
				t.Fatal(err)
			}
			stdin = string(data)
		}
		fmt.Fprintf(&b, "$ kubectl %s\n", strings.Join(st.args, " "))
		out, errOut, err := a.Kubectl(t, stdin, st.args...)
		b.WriteString(out)
		b.WriteString(errOut)
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			fmt.Fprintf(&b, "[exit %d]\n", exit.ExitCode())
		case err != nil:
			t.Fatalf("kubectl %s: %v", strings.Join(st.args, " "), err)
		}
	}
	return b.String()
}

// TestKubectlStorageVersionMigrationRuns: with the migrator admitd runs by
// default, migrations end with the conditions kube-controller-manager
// 1.37.2 left on migrations of the same resources: a served one Succeeded,
// one that cannot be patched Failed, both no longer Running.
func TestKubectlStorageVersionMigrationRuns(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	a.MustKubectl(t, "", "create", "deployment", "web", "--image=nginx")
	a.MustKubectl(t, `apiVersion: storagemigration.k8s.io/v1
kind: StorageVersionMigration
metadata: {name: deployments}
spec: {resource: {group: apps, resource: deployments}}
---
apiVersion: storagemigration.k8s.io/v1
kind: StorageVersionMigration
metadata: {name: bindings}
spec: {resource: {resource: bindings}}
`, "create", "-f", "-")
	conditions := "jsonpath={range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{\"\\n\"}{end}"
	want := map[string]string{
		"deployments": "Running=False MigrationCompleted: Migration completed\nSucceeded=True StorageVersionMigrationSucceeded: Migration completed\n",
		"bindings": "Running=False MigrationCompleted: Migration completed\n" +
			`Failed=True StorageVersionMigrationFailed: resource "/v1, Resource=bindings" does not support discovery operations: [update patch list]` + "\n",
	}
	for name, w := range want {
		waitFor(t, "migration "+name+" ends with "+w, func() bool {
			return a.MustKubectl(t, "", "get", "storageversionmigration", name, "-o", conditions) == w
		})
	}
	out := a.MustKubectl(t, "", "get", "storageversionmigrations")
	for _, row := range [][]string{{"bindings", "bindings", "Failed"}, {"deployments", "deployments.apps", "Succeeded"}} {
		if !hasLine(out, row) {
			t.Errorf("kubectl get storageversionmigrations: no row %q in\n%s", row, out)
		}
	}
}
