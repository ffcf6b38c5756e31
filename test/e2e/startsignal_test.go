package e2e

import (
	"bytes"
	"errors"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/admitd/admitd/test/e2e/harness"
)

// TestServeEndsOnSIGTERMWhileWaitingForEtcd: a server still waiting for
// an etcd that does not answer (its first connection is bounded by 30 s)
// exits on SIGTERM with a non-zero status and says why, instead of
// serving or waiting out the bound.
func TestServeEndsOnSIGTERMWhileWaitingForEtcd(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nobody := l.Addr().String()
	_ = l.Close() // nothing listens there now
	cmd := exec.Command(harness.Bin, "serve", "--etcd-servers", "http://"+nobody, "--data-dir", t.TempDir(), "--secure-port", "0", "--kubeconfig-out", "-")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		t.Fatalf("admitd serve exited before the signal (%v): %s", err, stderr.String())
	case <-time.After(time.Second):
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Errorf("admitd serve ended with %v, want a non-zero exit status", err)
		}
		if !strings.Contains(stderr.String(), "interrupted while starting") || strings.Contains(stdout.String(), "serving on") {
			t.Errorf("stdout %q, stderr %q: want no serving line and the interruption said", stdout.String(), stderr.String())
		}
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("admitd serve still running 15 s after SIGTERM (it waits up to 30 s for etcd); stderr: %s", stderr.String())
	}
}
