package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// kubectlModule is the k8s.io/kubectl release built when no kubectl is on
// PATH; KubectlRelease is the Kubernetes version it belongs to (module
// v0.x.y is Kubernetes v1.x.y), stamped into the binary so that `kubectl
// version` and its User-Agent report it.
const (
	kubectlModule  = "v0.37.2"
	KubectlRelease = "v1.37.2"
)

// kubectlMain is the generated command: k8s.io/kubectl is a library without
// a main package, so the tests write the few lines that run its root command.
const kubectlMain = `package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		util.CheckErr(err)
	}
}
`

var kubectlFound struct {
	once sync.Once
	path string
	err  error
}

// KubectlBinary is the kubectl every test runs: the one on PATH, else one
// built from k8s.io/kubectl once per test binary and cached across runs. It
// never skips: without a kubectl the kubectl tests fail.
func KubectlBinary(t *testing.T) string {
	t.Helper()
	kubectlFound.once.Do(func() {
		kubectlFound.path, kubectlFound.err = findKubectl()
	})
	if kubectlFound.err != nil {
		t.Fatalf("no kubectl on PATH and building one failed: %v", kubectlFound.err)
	}
	return kubectlFound.path
}

func findKubectl() (string, error) {
	if p, err := exec.LookPath("kubectl"); err == nil {
		fmt.Fprintf(os.Stderr, "e2e: using kubectl from PATH: %s\n", p)
		return p, nil
	}
	bin, err := KubectlCachePath()
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(bin); err == nil {
		fmt.Fprintf(os.Stderr, "e2e: kubectl not on PATH, using kubectl %s built earlier: %s\n", KubectlRelease, bin)
		return bin, nil
	}
	// Both e2e packages, and other runs on the machine, may need it at
	// once: one builds while the others wait for it.
	unlock, err := lockFile(bin + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		fmt.Fprintf(os.Stderr, "e2e: kubectl not on PATH, using kubectl %s another test binary built meanwhile: %s\n", KubectlRelease, bin)
		return bin, nil
	}
	fmt.Fprintf(os.Stderr, "e2e: kubectl not on PATH, building kubectl %s from k8s.io/kubectl %s (once, kept for later runs; one to two minutes on two cores)\n",
		KubectlRelease, kubectlModule)
	start := time.Now()
	if err := buildKubectl(bin); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "e2e: kubectl not on PATH, built kubectl %s from k8s.io/kubectl %s in %v: %s\n",
		KubectlRelease, kubectlModule, time.Since(start).Round(time.Second), bin)
	return bin, nil
}

// KubectlCachePath is where the built kubectl is kept between runs:
// <user cache dir>/admitd/kubectl-<release>/kubectl.
func KubectlCachePath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the built kubectl: %w", err)
	}
	return filepath.Join(dir, "admitd", "kubectl-"+KubectlRelease, "kubectl"), nil
}

// buildKubectl writes the kubectl main module to a temporary directory,
// resolves its dependencies through the Go module proxy and builds it to bin.
// It builds next to bin and renames, so that a concurrent run never sees a
// partial binary.
func buildKubectl(bin string) error {
	src, err := os.MkdirTemp("", "admitd-kubectl-src")
	if err != nil {
		return err
	}
	defer os.RemoveAll(src)
	goMod := "module admitd.test/kubectl\n\ngo 1.26\n\nrequire k8s.io/kubectl " + kubectlModule + "\n"
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte(goMod), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(kubectlMain), 0o600); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	defer os.Remove(tmp)
	if err := goCommand(src, "mod", "tidy"); err != nil {
		return err
	}
	if err := goCommand(src, "build", "-ldflags", kubectlLdflags(), "-o", tmp, "."); err != nil {
		return err
	}
	return os.Rename(tmp, bin)
}

// kubectlLdflags stamps KubectlRelease into k8s.io/component-base/version,
// as Kubernetes' release builds do.
func kubectlLdflags() string {
	minor := strings.Split(KubectlRelease, ".")[1]
	pkg := "k8s.io/component-base/version."
	return strings.Join([]string{"-s", "-w",
		"-X", pkg + "gitVersion=" + KubectlRelease,
		"-X", pkg + "gitMajor=1",
		"-X", pkg + "gitMinor=" + minor,
		"-X", pkg + "gitTreeState=clean",
	}, " ")
}

// goCommand runs `go args...` in dir, outside any workspace.
func goCommand(dir string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}
