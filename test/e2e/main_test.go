// Package e2e drives the built admitd binary with real clients: kubectl
// (the one on PATH, else one built from k8s.io/kubectl), client-go and, when
// installed, the Python client. The workload controllers' sessions are in
// the sibling package test/e2e/workloads, so that the two run in parallel,
// each within go test's per-package timeout.
package e2e

import (
	"strings"
	"testing"

	"github.com/admitd/admitd/test/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

// admitd is one running `admitd serve`; startAdmitd starts one for a test.
type admitd = harness.Admitd

var (
	startAdmitd      = harness.Start
	tryStartAdmitd   = harness.TryStart
	kubectlBinary    = harness.KubectlBinary
	stripSkewWarning = harness.StripSkewWarning
	lineDiff         = harness.LineDiff
)

const withoutWorkloadControllers = harness.WithoutWorkloadControllers

// TestKubectlVersion logs which kubectl the tests run and checks that it
// talks to admitd; a kubectl the tests built must report its release.
func TestKubectlVersion(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	out := a.MustKubectl(t, "", "version")
	bin := kubectlBinary(t)
	t.Logf("kubectl %s:\n%s", bin, out)
	if !strings.Contains(out, "Server Version: v1.37.") {
		t.Errorf("kubectl version = %q, want a Server Version v1.37.x", out)
	}
	if built, err := harness.KubectlCachePath(); err == nil && bin == built && !strings.Contains(out, "Client Version: "+harness.KubectlRelease+"\n") {
		t.Errorf("kubectl version of the built kubectl = %q, want Client Version %s", out, harness.KubectlRelease)
	}
}
