package server

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/admitd/admitd/pkg/quota"
)

// startQuota starts a server running the quota controller, recalculating
// every quota each resync.
func startQuota(t *testing.T, resync time.Duration) kubernetes.Interface {
	t.Helper()
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	o.Quota = QuotaOptions{Controller: true, Resync: resync}
	_, admin := startWith(t, o)
	return kubernetes.NewForConfigOrDie(admin)
}

func list(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// eventually polls cond every 20ms for up to 10s.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var ok bool
		if ok, last = cond(); ok {
			return
		}
	}
	t.Fatalf("%s: after 10s %s", what, last)
}

// quotaUsed waits until the quota's status.used equals want.
func quotaUsed(t *testing.T, c kubernetes.Interface, ns string, want corev1.ResourceList) {
	t.Helper()
	eventually(t, "quota status.used", func() (bool, string) {
		q, err := c.CoreV1().ResourceQuotas(ns).Get(t.Context(), "q", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return quota.Equal(q.Status.Used, want), "used " + quota.FormatList(q.Status.Used) + ", want " + quota.FormatList(want)
	})
}

// 16 clients create pods and config maps at once against tight quotas,
// round after round: no more objects than the quota allows are stored,
// every request is created or refused with the quota's 403, the quota's
// usage is exact once they are done, and it falls back when the objects
// are deleted.
func TestConcurrentCreatesStayWithinQuota(t *testing.T) {
	c := startQuota(t, time.Hour)
	ctx := t.Context()
	mustCreateNamespace(t, c, "race")
	eventually(t, "default service account and root CA", func() (bool, string) {
		_, err1 := c.CoreV1().ServiceAccounts("race").Get(ctx, "default", metav1.GetOptions{})
		_, err2 := c.CoreV1().ConfigMaps("race").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err1 == nil && err2 == nil, fmt.Sprint(err1, err2)
	})
	hard := list("pods", "5", "requests.cpu", "2", "configmaps", "4")
	rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
	if _, err := c.CoreV1().ResourceQuotas("race").Create(ctx, rq, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	idle := list("pods", "0", "requests.cpu", "0", "configmaps", "1") // kube-root-ca.crt
	quotaUsed(t, c, "race", idle)
	for round := 0; round < 3; round++ {
		pods, cms := createConcurrently(t, c, round)
		if pods != 5 || cms != 3 {
			t.Fatalf("round %d: %d pods and %d config maps created, want 5 and 3 (the quota's)", round, pods, cms)
		}
		stored, err := c.CoreV1().Pods("race").List(ctx, metav1.ListOptions{})
		if err != nil || len(stored.Items) != 5 {
			t.Fatalf("round %d: %d pods stored (%v), want 5", round, len(stored.Items), err)
		}
		quotaUsed(t, c, "race", list("pods", "5", "requests.cpu", "1500m", "configmaps", "4"))
		deleteAll(t, c)
		quotaUsed(t, c, "race", idle)
	}
}

// createConcurrently has 16 clients create two pods (300m each) and two
// config maps each; it returns how many of each were created, and fails
// the test on any answer but 201 or the quota's 403.
func createConcurrently(t *testing.T, c kubernetes.Interface, round int) (pods, cms int) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	check := func(err error, n *int) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			*n++
		case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota: q, "):
		default:
			t.Errorf("round %d: %v", round, err)
		}
	}
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 2; j++ {
				name := fmt.Sprintf("r%d-%d-%d", round, i, j)
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "c", Image: "pause", Resources: corev1.ResourceRequirements{Requests: list("cpu", "300m")}}}}}
				_, err := c.CoreV1().Pods("race").Create(t.Context(), pod, metav1.CreateOptions{})
				check(err, &pods)
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
				_, err = c.CoreV1().ConfigMaps("race").Create(t.Context(), cm, metav1.CreateOptions{})
				check(err, &cms)
			}
		}()
	}
	wg.Wait()
	return pods, cms
}

func deleteAll(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ctx := t.Context()
	pods, _ := c.CoreV1().Pods("race").List(ctx, metav1.ListOptions{})
	for _, p := range pods.Items {
		if err := c.CoreV1().Pods("race").Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
	}
	cms, _ := c.CoreV1().ConfigMaps("race").List(ctx, metav1.ListOptions{})
	for _, cm := range cms.Items {
		if cm.Name != "kube-root-ca.crt" {
			if err := c.CoreV1().ConfigMaps("race").Delete(ctx, cm.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// The periodic recalculation corrects a used figure written by hand.
func TestQuotaResyncCorrectsUsage(t *testing.T) {
	c := startQuota(t, 200*time.Millisecond)
	ctx := t.Context()
	mustCreateNamespace(t, c, "resync")
	rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: list("count/secrets", "9")}}
	if _, err := c.CoreV1().ResourceQuotas("resync").Create(ctx, rq, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	quotaUsed(t, c, "resync", list("count/secrets", "0"))
	got, err := c.CoreV1().ResourceQuotas("resync").Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Status.Used = list("count/secrets", "7")
	if _, err := c.CoreV1().ResourceQuotas("resync").UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	quotaUsed(t, c, "resync", list("count/secrets", "0"))
}
