package browser

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

var admitdBin string

// TestMain builds admitd from the repository (with the product module's
// own dependencies) for the tests to start.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "admitd-browser-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	admitdBin = filepath.Join(dir, "admitd")
	build := exec.Command("go", "build", "-o", admitdBin, "./cmd/admitd")
	build.Dir = filepath.Join("..", "..")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building admitd:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// lockedBuffer collects a process's output for a failure message.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// process is a started command whose first stdout line matching a
// pattern was awaited; it is stopped when the test ends.
type process struct {
	cmd    *exec.Cmd
	match  []string
	stderr *lockedBuffer
}

// startProcess runs name with args and waits up to 30s for a stdout line
// matching ready.
func startProcess(t *testing.T, ready *regexp.Regexp, name string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	t.Cleanup(p.stop)
	matched := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := ready.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case matched <- m:
				default:
				}
			}
		}
	}()
	select {
	case p.match = <-matched:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not print %q within 30s; stderr: %s", name, ready, p.stderr)
	}
	return p
}

func (p *process) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

var servingLine = regexp.MustCompile(`serving on (https://\S+?);? export KUBECONFIG=(\S+)`)

// admitd is a running `admitd serve`.
type admitd struct {
	*process
	URL, Kubeconfig string
}

func startAdmitd(t *testing.T, args ...string) *admitd {
	t.Helper()
	p := startProcess(t, servingLine, admitdBin, append([]string{"serve", "--secure-port", "0", "--data-dir", t.TempDir(), "--storage", "memory"}, args...)...)
	return &admitd{process: p, URL: p.match[1], Kubeconfig: p.match[2]}
}

func (a *admitd) restConfig(t *testing.T) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", a.Kubeconfig)
	if err != nil {
		t.Fatalf("loading kubeconfig: %v", err)
	}
	cfg.WarningHandler = rest.NoWarnings{} // the lint warnings of the configuration it writes
	return cfg
}

var proxyLine = regexp.MustCompile(`Starting to serve on (\S+)`)

// kubectlProxy runs `kubectl proxy` on a free port and returns its URL:
// the way a person opens the dashboard with their kubeconfig's
// credentials.
func kubectlProxy(t *testing.T, kubectl, kubeconfig string) string {
	t.Helper()
	p := startProcess(t, proxyLine, kubectl, "--kubeconfig", kubeconfig, "proxy", "--port", "0", "--address", "127.0.0.1")
	return "http://" + p.match[1]
}

// findChromium is $CHROMIUM, else chromium on PATH.
func findChromium() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no chromium on PATH")
}

// withTimeout is ctx bounded by d, cancelled when the test ends.
func withTimeout(t *testing.T, ctx context.Context, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(ctx, d)
	t.Cleanup(cancel)
	return ctx
}
