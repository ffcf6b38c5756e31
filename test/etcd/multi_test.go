package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/test/etcd/etcdtest"
)

// Leader election of the test: shorter than kube-controller-manager's
// defaults (15s/10s/2s) to keep the hand-over wait short, unless
// ADMITD_ETCDTEST_DEFAULT_ELECTION is set.
var (
	electionFlags = []string{"--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=500ms"}
	leaseDuration = 4 * time.Second
	retryPeriod   = 500 * time.Millisecond
)

func useDefaultElection() {
	if os.Getenv("ADMITD_ETCDTEST_DEFAULT_ELECTION") != "" {
		electionFlags, leaseDuration, retryPeriod = nil, 15*time.Second, 2*time.Second
	}
}

// leadingLine is logged by an instance that starts its controllers.
const leadingLine = "leading: starting the controllers"

// TestTwoInstances runs two admitd processes over a three-member etcd in
// child processes: configuration and definitions written through one take
// effect on the other, resourceVersions agree, the controllers run on one
// instance at a time, and when that instance is killed (-9) under write
// load the other serves on without an error, loses no acknowledged write,
// and takes the controllers over; then an etcd member is killed (-9) under
// load.
func TestTwoInstances(t *testing.T) {
	useDefaultElection()
	c := etcdtest.StartProcesses(t, 3)
	a := startInstance(t, "A", c.Endpoints(), nil, electionFlags...)
	holderA := waitLeaseHolder(t, a, "")
	b := startInstance(t, "B", c.Endpoints(), a, electionFlags...)
	for _, ns := range []string{"guarded", "policed", "load", "load2"} {
		if _, err := a.client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("resourceVersions agree", func(t *testing.T) { checkSameResourceVersion(t, a, b) })
	t.Run("webhook configuration propagates", func(t *testing.T) { checkWebhookPropagation(t, a, b) })
	t.Run("policy propagates", func(t *testing.T) { checkPolicyPropagation(t, a, b) })
	t.Run("definition propagates", func(t *testing.T) { checkDefinitionPropagation(t, a, b) })
	t.Run("cluster IPs as IPAddresses across instances", func(t *testing.T) { checkClusterIPs(t, a, b) })
	if got := leaseHolder(t, b); got != holderA {
		t.Fatalf("lease holder with both instances up = %q, want A's %q", got, holderA)
	}
	t.Logf("kubectl get lease -n kube-system (through B):\n%s", b.kubectl(t, "get", "lease", "-n", "kube-system"))

	t.Run("kill -9 of the leading instance under load", func(t *testing.T) { checkInstanceKill(t, a, b, holderA) })
	t.Run("kill -9 of an etcd member under load", func(t *testing.T) { checkMemberKill(t, c, b) })
}

// leaseHolder is the holder of the controllers' Lease, read through in.
func leaseHolder(t *testing.T, in *instance) string {
	t.Helper()
	lease, err := in.client.CoordinationV1().Leases("kube-system").Get(t.Context(), "kube-controller-manager", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		t.Fatalf("reading the lease through %s: %v", in.name, err)
	}
	if lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

// waitLeaseHolder waits until someone other than not holds the lease.
func waitLeaseHolder(t *testing.T, in *instance, not string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if h := leaseHolder(t, in); h != "" && h != not {
			return h
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the lease is not taken (other than by %q) within 30s", not)
	return ""
}

func checkSameResourceVersion(t *testing.T, a, b *instance) {
	created, err := a.client.CoreV1().ConfigMaps("default").Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "rv"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.client.CoreV1().ConfigMaps("default").Get(t.Context(), "rv", metav1.GetOptions{})
	if err != nil || got.ResourceVersion != created.ResourceVersion || got.UID != created.UID {
		t.Fatalf("Get through B = %v, %v; want resourceVersion %s, uid %s", got.ResourceVersion, err, created.ResourceVersion, created.UID)
	}
	list, err := b.client.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{
		ResourceVersion: created.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if err != nil || list.ResourceVersion != created.ResourceVersion {
		t.Fatalf("exact List through B at %s: resourceVersion %v, %v", created.ResourceVersion, list, err)
	}
	w, err := b.client.CoreV1().ConfigMaps("default").Watch(t.Context(), metav1.ListOptions{ResourceVersion: created.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created.Data = map[string]string{"k": "v"}
	updated, err := a.client.CoreV1().ConfigMaps("default").Update(t.Context(), created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		if cm, ok := ev.Object.(*corev1.ConfigMap); !ok || ev.Type != "MODIFIED" || cm.ResourceVersion != updated.ResourceVersion {
			t.Errorf("watch through B from %s: %s %v, want MODIFIED at %s", created.ResourceVersion, ev.Type, ev.Object, updated.ResourceVersion)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("no event through B for the update through A within 10s")
	}
}

// checkInstanceKill kills A mid-load (writers to A and B): B's writers see
// no error, no acknowledged write is lost, B takes the lease over, and
// B's controllers run (a namespace deleted then is finalized).
func checkInstanceKill(t *testing.T, a, b *instance, holderA string) {
	w := startWriters([]*instance{a, b}, "load", 8)
	defer w.end()
	w.waitAcked(t, 300)
	if b.logContains(t, leadingLine) {
		t.Errorf("B started its controllers while A held the lease")
	}
	a.kill()
	killed := time.Now()
	holderB := waitLeaseHolder(t, b, holderA)
	handover := time.Since(killed)
	w.waitAcked(t, 200)
	w.end()
	t.Logf("lease taken over by %s %s after kill -9 of A (lease duration %s)", holderB, handover.Round(time.Millisecond), leaseDuration)
	// a candidate takes over once the lease duration has passed since it
	// saw the last renewal, trying every retry period (+20% jitter)
	if limit := leaseDuration + 2*retryPeriod + 3*time.Second; handover > limit { // + slack for a loaded machine
		t.Errorf("hand-over took %s, want within %s (lease duration %s, retry period %s)", handover, limit, leaseDuration, retryPeriod)
	}
	if !b.logContains(t, leadingLine) {
		t.Errorf("B holds the lease but did not log %q", leadingLine)
	}
	for _, err := range w.failures("B") {
		t.Errorf("a client of B saw %v", err)
	}
	w.checkNoLostWrite(t, b, "load")
	checkNamespaceFinalized(t, b)
}

// checkNamespaceFinalized deletes a namespace with content through in and
// waits until the namespace controller has emptied and finalized it.
func checkNamespaceFinalized(t *testing.T, in *instance) {
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "after-handover"}}
	if _, err := in.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := in.client.CoreV1().ConfigMaps(ns.Name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "content"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := in.client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for {
		_, err := in.client.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("namespace %s still there 30s after its delete (%v): no namespace controller runs", ns.Name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("namespace deleted through B finalized in %s", time.Since(start).Round(time.Millisecond))
}

// checkMemberKill kills the etcd leader (-9) while 8 writers create
// through in: no acknowledged write is lost, writes go on, and a write
// that fails is refused by the server (no connection error).
func checkMemberKill(t *testing.T, c *etcdtest.Processes, in *instance) {
	w := startWriters([]*instance{in}, "load2", 8)
	defer w.end()
	w.waitAcked(t, 200)
	leader := c.Leader(t.Context())
	if leader == nil {
		t.Fatal("no etcd leader")
	}
	leader.Kill()
	killed := time.Now()
	w.waitAcked(t, 300)
	t.Logf("300 creates acknowledged %s after kill -9 of the etcd leader %s", time.Since(killed).Round(time.Millisecond), leader.Name)
	w.end()
	w.checkNoLostWrite(t, in, "load2")
	for _, err := range w.failures(in.name) {
		t.Logf("a write failed: %v", err)
		var status apierrors.APIStatus
		if !errors.As(err, &status) || status.Status().Code < 500 {
			t.Errorf("a write failed with %v, want a 5xx Status", err)
		}
	}
	c.Restart(leader)
}

// firstResult repeats create through in until ok(err) holds, up to 10s,
// and returns how long that took.
func firstResult(t *testing.T, in *instance, ns string, ok func(error) bool) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		created, err := in.client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-"}}, metav1.CreateOptions{})
		cancel()
		if ok(err) {
			return time.Since(start)
		}
		if err == nil {
			_ = in.client.CoreV1().ConfigMaps(ns).Delete(t.Context(), created.Name, metav1.DeleteOptions{})
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("create in %s through %s: still %v after 10s", ns, in.name, err)
		}
	}
}

func deniedWith(substr string) func(error) bool {
	return func(err error) bool { return err != nil && strings.Contains(err.Error(), substr) }
}

func allowed(err error) bool { return err == nil }

// checkClusterIPs: cluster IPs are IPAddress objects in etcd, so an
// address taken through a is refused through b at once (no follower to
// wait for) with kube-apiserver's message, and free on b as soon as a
// deleted it; then Services created at once through both, four clients
// each, until the /24 is nearly full, never share an address, and each
// address's IPAddress names its Service.
func checkClusterIPs(t *testing.T, a, b *instance) {
	ctx := t.Context()
	const ns = "ips"
	if _, err := a.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := func(name, ip string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{ClusterIP: ip, Ports: []corev1.ServicePort{{Port: 80}}}}
	}
	if _, err := a.client.CoreV1().Services(ns).Create(ctx, svc("on-a", "10.0.0.50"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := b.client.CoreV1().Services(ns).Create(ctx, svc("on-b", "10.0.0.50"), metav1.CreateOptions{})
	const taken = `spec.clusterIPs: Invalid value: ["10.0.0.50"]: failed to allocate IP 10.0.0.50: provided IP is already allocated`
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), taken) {
		t.Fatalf("B creating A's address at once = %v, want %s", err, taken)
	}
	if err := a.client.CoreV1().Services(ns).Delete(ctx, "on-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.CoreV1().Services(ns).Create(ctx, svc("on-b", "10.0.0.50"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("B creating the address A released at once: %v", err)
	}
	got := createServicesThroughBoth(t, a, b, ns, 120)
	owners := map[string]string{}
	for name, ip := range got {
		if other, ok := owners[ip]; ok {
			t.Errorf("%s handed out to both %s and %s", ip, other, name)
		}
		owners[ip] = name
	}
	ips, err := b.client.NetworkingV1().IPAddresses().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, ip := range ips.Items {
		if ref := ip.Spec.ParentRef; ref != nil && ref.Namespace == ns {
			held++
			if owners[ip.Name] != ref.Name && !(ip.Name == "10.0.0.50" && ref.Name == "on-b") {
				t.Errorf("IPAddress %s names %s, but %q holds it", ip.Name, ref.Name, owners[ip.Name])
			}
		}
	}
	if held != len(got)+1 {
		t.Errorf("%d IPAddresses of namespace %s, want one per Service (%d)", held, ns, len(got)+1)
	}
	t.Logf("%d Services created through A and B at once, %d distinct addresses, %d IPAddresses", len(got), len(owners), held)
}

// createServicesThroughBoth creates perInstance Services without an
// address through each of a and b, four clients each at once, and returns
// the address each got.
func createServicesThroughBoth(t *testing.T, a, b *instance, ns string, perInstance int) map[string]string {
	var mu sync.Mutex
	got := map[string]string{}
	var wg sync.WaitGroup
	for w := range 8 {
		in := a
		if w%2 == 1 {
			in = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w / 2; i < perInstance; i += 4 {
				name := fmt.Sprintf("%s-%d", strings.ToLower(in.name), i)
				s, err := in.client.CoreV1().Services(ns).Create(t.Context(), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
				if err != nil {
					t.Errorf("creating %s through %s: %v", name, in.name, err)
					return
				}
				mu.Lock()
				got[name] = s.Spec.ClusterIP
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return got
}
