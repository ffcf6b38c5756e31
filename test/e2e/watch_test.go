package e2e

import (
	"bufio"
	"strings"
	"testing"
	"time"
)

// TestKubectlGetWatch runs `kubectl get configmaps -w` and checks that it
// prints the existing object, then one created, modified and deleted later.
func TestKubectlGetWatch(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	a.MustKubectl(t, "", "create", "configmap", "before")
	cmd := a.KubectlCmd(t.Context(), t, "get", "configmaps", "-w", "--output-watch-events")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	expect := func(want string) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("kubectl get -w ended before printing %q", want)
				}
				if strings.Contains(line, want) {
					return
				}
			case <-deadline:
				t.Fatalf("kubectl get -w never printed %q", want)
			}
		}
	}
	expect("before")
	a.MustKubectl(t, "", "create", "configmap", "during")
	expect("during")
	a.MustKubectl(t, "", "label", "configmap", "during", "x=y")
	expect("MODIFIED")
	a.MustKubectl(t, "", "delete", "configmap", "during")
	expect("DELETED")
}
