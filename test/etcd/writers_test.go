package etcd_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// writers create ConfigMaps through admitd instances until stopped, and
// remember what each instance acknowledged and what failed.
type writers struct {
	wg   sync.WaitGroup
	stop chan struct{}
	once sync.Once

	mu     sync.Mutex
	acked  map[string]string  // name -> resourceVersion acknowledged
	failed map[string][]error // instance name -> errors
}

// startWriters starts n writers, writer i creating through targets[i %
// len(targets)] in namespace ns. A writer whose instance fails goes on
// (its failures are counted) unless the instance has exited.
func startWriters(targets []*instance, ns string, n int) *writers {
	w := &writers{stop: make(chan struct{}), acked: map[string]string{}, failed: map[string][]error{}}
	for i := range n {
		in := targets[i%len(targets)]
		w.wg.Go(func() { w.write(in, ns, i) })
	}
	return w
}

func (w *writers) write(in *instance, ns string, writer int) {
	cms := in.client.CoreV1().ConfigMaps(ns)
	for k := 0; ; k++ {
		select {
		case <-w.stop:
			return
		case <-in.exited:
			return
		default:
		}
		name := fmt.Sprintf("%s-w%d-%05d", strings.ToLower(in.name), writer, k)
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		got, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": name}}, metav1.CreateOptions{})
		cancel()
		w.mu.Lock()
		if err != nil {
			w.failed[in.name] = append(w.failed[in.name], err)
		} else {
			w.acked[name] = got.ResourceVersion
		}
		w.mu.Unlock()
	}
}

func (w *writers) ackedCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// waitAcked waits until n more creates have been acknowledged.
func (w *writers) waitAcked(t *testing.T, n int) {
	t.Helper()
	target := w.ackedCount() + n
	deadline := time.Now().Add(30 * time.Second)
	for w.ackedCount() < target {
		if time.Now().After(deadline) {
			t.Fatalf("%d creates acknowledged within 30s, want %d; failures: %s", w.ackedCount(), target, w.summary())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// end stops the writers and waits for them.
func (w *writers) end() {
	w.once.Do(func() { close(w.stop) })
	w.wg.Wait()
}

// checkNoLostWrite lists ns through in: every acknowledged create must be
// there at the resourceVersion it was acknowledged with.
func (w *writers) checkNoLostWrite(t *testing.T, in *instance, ns string) {
	t.Helper()
	list, err := in.client.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing %s through %s: %v", ns, in.name, err)
	}
	stored := map[string]string{}
	for _, cm := range list.Items {
		stored[cm.Name] = cm.ResourceVersion
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	lost := 0
	for name, rv := range w.acked {
		if stored[name] != rv {
			lost++
			if lost <= 5 {
				t.Errorf("acknowledged create of %s at resourceVersion %s: listed at %q", name, rv, stored[name])
			}
		}
	}
	t.Logf("%s: %d creates acknowledged, %d lost, %d listed; failures by instance: %v", ns, len(w.acked), lost, len(stored), w.failureCounts())
}

func (w *writers) failureCounts() map[string]int {
	out := map[string]int{}
	for name, errs := range w.failed {
		out[name] = len(errs)
	}
	return out
}

// failures are the errors the writers of instance name saw.
func (w *writers) failures(name string) []error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]error(nil), w.failed[name]...)
}

// summary counts the failures by instance, with the last of each.
func (w *writers) summary() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for name, errs := range w.failed {
		out = append(out, fmt.Sprintf("%s: %d (last: %v)", name, len(errs), errs[len(errs)-1]))
	}
	return strings.Join(out, "; ")
}
