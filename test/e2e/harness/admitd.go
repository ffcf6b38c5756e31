// Package harness runs the built admitd binary for the end-to-end tests
// (test/e2e and its sibling packages): Main builds it once per test binary,
// Start runs `admitd serve`, and kubectl (the one on PATH, else one built
// from k8s.io/kubectl) talks to it.
package harness

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
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Bin is the admitd binary Main built.
var Bin string

// Main builds admitd, runs the tests and removes the binary: a test
// package's TestMain.
func Main(m *testing.M) {
	dir, err := os.MkdirTemp("", "admitd-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	Bin = filepath.Join(dir, "admitd")
	build := exec.Command("go", "build", "-o", Bin, "github.com/admitd/admitd/cmd/admitd")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building admitd:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Admitd is one running server process.
type Admitd struct {
	Cmd        *exec.Cmd
	URL        string
	Kubeconfig string
	DataDir    string
	// Stderr is what the server printed on its standard error so far.
	Stderr *Output
}

// Output collects what a process writes, safe to read while it writes
// (exec copies a pipe into it from a goroutine of its own).
type Output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

// String is what was written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

var servingLine = regexp.MustCompile(`serving on (https://\S+?);? export KUBECONFIG=(\S+)`)

// Start runs `admitd serve` on a free port with dataDir and waits for its
// "serving on" line; the server is stopped when the test ends.
func Start(t *testing.T, dataDir string, args ...string) *Admitd {
	t.Helper()
	a, err := TryStart(dataDir, args...)
	if err != nil {
		t.Fatalf("starting admitd: %v", err)
	}
	t.Cleanup(a.Stop)
	return a
}

// TryStart is Start without a test: the caller stops the server.
func TryStart(dataDir string, args ...string) (*Admitd, error) {
	full := append([]string{"serve", "--secure-port", "0", "--data-dir", dataDir}, args...)
	cmd := exec.Command(Bin, full...)
	dieWithTests(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	a := &Admitd{Cmd: cmd, DataDir: dataDir, Stderr: &Output{}}
	cmd.Stderr = a.Stderr
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
			return nil, fmt.Errorf("admitd exited or printed %q; stderr: %s", line, a.Stderr.String())
		}
		a.URL, a.Kubeconfig = m[1], m[2]
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("admitd did not start; stderr: %s", a.Stderr.String())
	}
	return a, nil
}

// Stop ends the server with SIGTERM (SIGKILL after 10 s).
func (a *Admitd) Stop() {
	if a.Cmd.ProcessState != nil {
		return
	}
	_ = a.Cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = a.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = a.Cmd.Process.Kill()
		<-done
	}
}

// Kill ends the server at once, as a crash would.
func (a *Admitd) Kill() {
	_ = a.Cmd.Process.Kill()
	_ = a.Cmd.Wait()
}

// RestConfig is the server's admin client configuration.
func (a *Admitd) RestConfig(t *testing.T) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", a.Kubeconfig)
	if err != nil {
		t.Fatalf("loading kubeconfig: %v", err)
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	return cfg
}

// KubectlCmd is a kubectl command against the server (KubectlBinary), with
// a HOME of its own so that no cache or configuration of the user's applies.
func (a *Admitd) KubectlCmd(ctx context.Context, t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, KubectlBinary(t), append([]string{"--kubeconfig", a.Kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	return cmd
}

// Kubectl runs kubectl against the server and returns stdout and stderr.
func (a *Admitd) Kubectl(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	cmd := a.KubectlCmd(t.Context(), t, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	err := cmd.Run()
	return out.String(), StripSkewWarning(errb.String()), err
}

// MustKubectl runs kubectl and fails the test on error.
func (a *Admitd) MustKubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := a.Kubectl(t, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\nstdout: %s\nstderr: %s\nserver stderr: %s", strings.Join(args, " "), err, out, errOut, a.Stderr.String())
	}
	return out
}

// StripSkewWarning drops the warning a kubectl more than one minor version
// away from the server's (admitd reports 1.37) prints, for example
// Debian's kubectl 1.32.
func StripSkewWarning(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "version difference between client") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}
