package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func TestRestartKeepsObjects(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := startAdmitd(t, dir)
	a.MustKubectl(t, "", "create", "namespace", "keep")
	a.MustKubectl(t, "", "create", "configmap", "c1", "-n", "keep", "--from-literal=k=v")
	a.Stop()

	b := startAdmitd(t, dir)
	if got := b.MustKubectl(t, "", "get", "configmap", "c1", "-n", "keep", "-o", "jsonpath={.data.k}"); got != "v" {
		t.Fatalf("after restart configmap data = %q, want v", got)
	}
}

func TestSecondServerOnSameDataDirRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	startAdmitd(t, dir)
	b, err := tryStartAdmitd(dir)
	if err == nil {
		b.Stop()
		t.Fatalf("second admitd on the same data dir started, want a refusal")
	}
	if !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second admitd error = %v, want it to say the data directory is in use", err)
	}
}

// TestAcknowledgedWritesSurviveKill9 writes from 8 clients, kills the server
// with SIGKILL mid-stream, restarts it and checks every acknowledged write.
func TestAcknowledgedWritesSurviveKill9(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := startAdmitd(t, dir)
	cs := kubernetes.NewForConfigOrDie(a.RestConfig(t))
	ctx := context.Background()
	var mu sync.Mutex
	var acked []string
	var n atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("cm-%d", n.Add(1))
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": name}}
				if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err == nil {
					mu.Lock()
					acked = append(acked, name)
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(700 * time.Millisecond)
	a.Kill()
	close(stop)
	wg.Wait()
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged before the kill")
	}
	b := startAdmitd(t, dir)
	cs = kubernetes.NewForConfigOrDie(b.RestConfig(t))
	list, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, cm := range list.Items {
		have[cm.Name] = true
	}
	for _, name := range acked {
		if !have[name] {
			t.Errorf("acknowledged configmap %s missing after kill -9", name)
		}
	}
	t.Logf("%d acknowledged writes, all present after restart", len(acked))
}
