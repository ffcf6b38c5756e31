// Package e2e drives the built admitd binary with real clients: kubectl
// (the one on PATH, else one built from k8s.io/kubectl), client-go and, when
// installed, the Python client.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

var admitdBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "admitd-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	admitdBin = filepath.Join(dir, "admitd")
	build := exec.Command("go", "build", "-o", admitdBin, "../../cmd/admitd")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building admitd:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// admitd is one running server process.
type admitd struct {
	cmd        *exec.Cmd
	URL        string
	Kubeconfig string
	DataDir    string
	stderr     *bytes.Buffer
}

var servingLine = regexp.MustCompile(`serving on (https://\S+?);? export KUBECONFIG=(\S+)`)

// startAdmitd runs `admitd serve` on a free port with dataDir and waits for
// its "serving on" line.
func startAdmitd(t *testing.T, dataDir string, args ...string) *admitd {
	t.Helper()
	a, err := tryStartAdmitd(dataDir, args...)
	if err != nil {
		t.Fatalf("starting admitd: %v", err)
	}
	t.Cleanup(a.stop)
	return a
}

func tryStartAdmitd(dataDir string, args ...string) (*admitd, error) {
	full := append([]string{"serve", "--secure-port", "0", "--data-dir", dataDir}, args...)
	cmd := exec.Command(admitdBin, full...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	a := &admitd{cmd: cmd, DataDir: dataDir, stderr: &bytes.Buffer{}}
	cmd.Stderr = a.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
	}()
	select {
	case line, ok := <-lines:
		m := servingLine.FindStringSubmatch(line)
		if !ok || m == nil {
			_ = cmd.Wait()
			return nil, fmt.Errorf("admitd exited or printed %q; stderr: %s", line, a.stderr.String())
		}
		a.URL, a.Kubeconfig = m[1], m[2]
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("admitd did not start; stderr: %s", a.stderr.String())
	}
	return a, nil
}

func (a *admitd) stop() {
	if a.cmd.ProcessState != nil {
		return
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = a.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = a.cmd.Process.Kill()
		<-done
	}
}

func (a *admitd) kill() {
	_ = a.cmd.Process.Kill()
	_ = a.cmd.Wait()
}

func (a *admitd) restConfig(t *testing.T) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", a.Kubeconfig)
	if err != nil {
		t.Fatalf("loading kubeconfig: %v", err)
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	return cfg
}

// kubectlCmd is a kubectl command against the server (kubectlBinary), with
// a HOME of its own so that no cache or configuration of the user's applies.
func (a *admitd) kubectlCmd(ctx context.Context, t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, kubectlBinary(t), append([]string{"--kubeconfig", a.Kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	return cmd
}

// kubectl runs kubectl against the server and returns stdout and stderr.
func (a *admitd) kubectl(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	cmd := a.kubectlCmd(t.Context(), t, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	err := cmd.Run()
	return out.String(), stripSkewWarning(errb.String()), err
}

// mustKubectl runs kubectl and fails the test on error.
func (a *admitd) mustKubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := a.kubectl(t, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\nstdout: %s\nstderr: %s\nserver stderr: %s", strings.Join(args, " "), err, out, errOut, a.stderr.String())
	}
	return out
}

// stripSkewWarning drops the warning a kubectl more than one minor version
// away from the server's (admitd reports 1.37) prints, for example
// Debian's kubectl 1.32.
func stripSkewWarning(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "version difference between client") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}
