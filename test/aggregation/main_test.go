// Package aggregation tests admitd's aggregation layer end to end:
// k8s.io/sample-apiserver, built from the module proxy, runs as a process
// behind an APIService of the admitd binary, and kubectl uses its
// flunders through admitd.
package aggregation

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// binaries are the programs the tests run, built once by TestMain.
var binaries struct {
	admitd, sample string
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "admitd-aggregation-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binaries.admitd, binaries.sample = filepath.Join(dir, "admitd"), filepath.Join(dir, "sample-apiserver")
	// admitd from this checkout (the root module); the sample server is a
	// tool of this module (go.mod), at the release admitd follows.
	builds := []*exec.Cmd{
		exec.Command("go", "build", "-o", binaries.admitd, "./cmd/admitd"),
		exec.Command("go", "build", "-o", binaries.sample, "k8s.io/sample-apiserver"),
	}
	builds[0].Dir = "../.."
	for _, b := range builds {
		b.Stdout, b.Stderr = os.Stdout, os.Stderr
		if err := b.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", strings.Join(b.Args, " "), err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// kubectlRelease is the kubectl the tests want when none is on PATH:
// test/e2e builds it into the user cache directory.
const kubectlRelease = "v1.37.2"

// kubectlBinary is kubectl on PATH, else the one test/e2e built. Without
// either the test skips, unless CI=true (CI installs kubectl).
func kubectlBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("kubectl"); err == nil {
		return p
	}
	if dir, err := os.UserCacheDir(); err == nil {
		built := filepath.Join(dir, "admitd", "kubectl-"+kubectlRelease, "kubectl")
		if _, err := os.Stat(built); err == nil {
			return built
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no kubectl on PATH (CI installs one with .ci/install-tools)")
	}
	t.Skip("no kubectl on PATH and none built by test/e2e yet (go test ./test/e2e builds one)")
	return ""
}
