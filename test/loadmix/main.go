// Command loadmix drives an API server with the many-client workloads of
// issue 25 and prints one result line; test/sidebyside-load.sh runs it
// against admitd and the real kube-apiserver in turn and adds each
// process's peak memory and CPU.
//
//	loadmix -kubeconfig K -mode lists    [-clients 200 -objects 5000 -duration 60s]
//	loadmix -kubeconfig K -mode watchers [-watchers 1000 -creates 2000]
//	loadmix -kubeconfig K -mode verbs -verb get|update|patch|apply|seed [-ops 20000 -verb-objects 800]
//
// lists: -clients clients, as -list-users users (impersonated), each on a
// connection of its own (-shared-connection: all on one), list one
// namespace of -objects ConfigMaps (~460 bytes each) in a loop without
// retrying, while a second user runs `kubectl get configmaps` on a small
// namespace once a second; it reports lists done, their latency, every
// failure by kind (a 429 with and without Retry-After) and the second
// user's slowest answer: kubectl's run, the answer to its list as kubectl
// timed it (its start-up on a saturated machine aside), and the same list
// sent from this process on a connection of its own.
//
// watchers: -watchers watches of one namespace (100 streams a connection),
// then -creates ConfigMaps from 8 clients; it reports creates/s and
// whether every watcher received every event (-hold keeps the watches
// open a while longer, idle).
//
// verbs: -ops requests of -verb (get, update, patch, apply) from 8 clients
// on -verb-objects ConfigMaps of one namespace (seeded first where
// missing; -verb seed only seeds), as loadgen's creates for the other
// verbs; it reports the rate and latency.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "admin kubeconfig of the server")
	mode := flag.String("mode", "lists", "lists, watchers or verbs")
	clients := flag.Int("clients", 200, "lists: concurrent listing clients")
	listUsers := flag.Int("list-users", 1, "lists: how many users the listing clients are (client i is user lister-<i mod n>); 1: one heavy user beside the second user")
	sharedConnection := flag.Bool("shared-connection", false, "lists: the listing clients share one HTTP/2 connection (client-go's transport cache) instead of one each, as separate processes have")
	objects := flag.Int("objects", 5000, "lists: ConfigMaps in the listed namespace")
	duration := flag.Duration("duration", 60*time.Second, "lists: how long the clients list")
	watchers := flag.Int("watchers", 1000, "watchers: concurrent watches")
	creates := flag.Int("creates", 2000, "watchers: ConfigMaps created while they watch")
	hold := flag.Duration("hold", 0, "watchers: keep the watches open this long after every event arrived (to measure idle watchers)")
	verb := flag.String("verb", "get", "verbs: get, update, patch, apply, or seed (create the objects only)")
	ops := flag.Int("ops", 20000, "verbs: requests in total")
	verbObjects := flag.Int("verb-objects", 800, "verbs: ConfigMaps the requests spread over")
	cpuProfile := flag.String("cpuprofile", "", "write the client's own CPU profile to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail(err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	admin := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	switch *mode {
	case "lists":
		runLists(ctx, cfg, admin, *kubeconfig, listLoad{*clients, max(*listUsers, 1), *sharedConnection}, *objects, *duration)
	case "watchers":
		runWatchers(ctx, cfg, admin, *watchers, *creates, *hold)
	case "verbs":
		runVerb(ctx, cfg, admin, *verb, *ops, *verbObjects)
	default:
		fail(fmt.Errorf("unknown mode %q", *mode))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "loadmix:", err)
	os.Exit(1)
}

// ensureNamespace creates ns with n ConfigMaps unless it has them.
func ensureNamespace(ctx context.Context, cs kubernetes.Interface, ns string, n int) {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		fail(err)
	}
	have, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		fail(err)
	}
	var wg sync.WaitGroup
	next := atomic.Int64{}
	next.Store(int64(len(have.Items)))
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i), Labels: map[string]string{"app": "loadmix", "tier": "bulk"}},
					Data: map[string]string{"payload": strings.Repeat("x", 300)}}
				if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
					fail(err)
				}
			}
		}()
	}
	wg.Wait()
}

// allowView lets every authenticated user read ConfigMaps (a role of its
// own: without kube-controller-manager, kube-apiserver's aggregated view
// role is empty).
func allowView(ctx context.Context, cs kubernetes.Interface) {
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "loadmix-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}}}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, cr, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		fail(err)
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "loadmix-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "loadmix-reader"},
		Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "Group", Name: "system:authenticated"}}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		fail(err)
	}
}

// asUser is cfg impersonating user (in system:authenticated).
func asUser(cfg *rest.Config, user string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	return c
}

// listLoad is who lists: how many clients, as how many users, over one
// connection or a connection each.
type listLoad struct {
	clients, users   int
	sharedConnection bool
}

// ownConnection makes c's client dial a connection of its own: client-go
// shares a transport, so one HTTP/2 connection, among configs with the
// same TLS settings, unless the config dials for itself.
func ownConnection(c *rest.Config) {
	c.Dial = (&net.Dialer{Timeout: 30 * time.Second}).DialContext
}

func runLists(ctx context.Context, cfg *rest.Config, admin kubernetes.Interface, kubeconfig string, load listLoad, objects int, duration time.Duration) {
	ensureNamespace(ctx, admin, "loadmix", objects)
	ensureNamespace(ctx, admin, "loadmix-small", 5)
	allowView(ctx, admin)
	time.Sleep(time.Second) // RBAC caches
	var mu sync.Mutex
	var latencies []time.Duration
	failures := map[string]int{}
	deadline := time.Now().Add(duration)
	var wg sync.WaitGroup
	for i := range load.clients {
		c := asUser(cfg, fmt.Sprintf("lister-%d", i%load.users))
		if !load.sharedConnection {
			ownConnection(c)
		}
		client, err := rest.HTTPClientFor(c)
		if err != nil {
			fail(err)
		}
		url := c.Host + "/api/v1/namespaces/loadmix/configmaps"
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				start := time.Now()
				outcome := list(client, url)
				mu.Lock()
				if outcome == "" {
					latencies = append(latencies, time.Since(start))
				} else {
					failures[outcome]++
				}
				mu.Unlock()
				if strings.HasPrefix(outcome, "429") {
					time.Sleep(time.Second) // as a client honouring Retry-After would
				}
			}
		}()
	}
	second := secondUser(cfg, kubeconfig, deadline)
	wg.Wait()
	slow := <-second
	slices.Sort(latencies)
	pct := func(p float64) time.Duration { return quantile(latencies, p).Round(time.Millisecond) }
	var fails []string
	for k, v := range failures {
		fails = append(fails, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(fails)
	fmt.Printf("lists: %d done (%.1f/s), p50 %v p99 %v; failed: %s; second user's kubectl get: %d runs, slowest %v (its list's answer, as kubectl timed it: slowest %v), over 1 s %d, failed %d; its list alone: median %v, slowest %v, failed %d\n",
		len(latencies), float64(len(latencies))/duration.Seconds(), pct(0.5), pct(0.99), strings.Join(fails, " "), slow.runs, slow.slowest.Round(time.Millisecond),
		slow.kubectlRequestSlowest.Round(time.Millisecond), slow.overSecond, slow.failed, slow.requestMedian().Round(time.Millisecond), slow.requestSlowest.Round(time.Millisecond), slow.requestFailed)
}

// list sends one list and reads it whole; "" when it succeeded, else what
// went wrong.
func list(client *http.Client, url string) string {
	resp, err := client.Get(url)
	if err != nil {
		return "error"
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	switch {
	case resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "":
		return "429"
	case resp.StatusCode == http.StatusTooManyRequests:
		return "429-without-Retry-After"
	case resp.StatusCode != http.StatusOK:
		return fmt.Sprint(resp.StatusCode)
	case err != nil:
		return "truncated"
	}
	return ""
}

type secondResult struct {
	runs, failed, overSecond int
	slowest                  time.Duration
	// the slowest answer to kubectl's list, as kubectl timed it (-v=6):
	// what of a run was the server's, not kubectl's start-up
	kubectlRequestSlowest time.Duration
	// the same list sent from this process (no kubectl start-up): the
	// slowest, and how many failed
	requestSlowest time.Duration
	requestFailed  int
	// every such list's latency, in the order sent
	requestLatencies []time.Duration
}

// requestMedian is the median latency of the second user's lists sent
// from this process.
func (r secondResult) requestMedian() time.Duration {
	if len(r.requestLatencies) == 0 {
		return 0
	}
	sorted := slices.Clone(r.requestLatencies)
	slices.Sort(sorted)
	return sorted[len(sorted)/2]
}

// secondUser runs kubectl get as another user once a second until
// deadline, each time after sending the list kubectl sends from this
// process (what the server takes, without kubectl's own start-up on a
// saturated machine).
func secondUser(cfg *rest.Config, kubeconfig string, deadline time.Time) <-chan secondResult {
	out := make(chan secondResult, 1)
	c := asUser(cfg, "second-user")
	// Its own connection, as another user's process has: on the listers'
	// one, their megabytes would queue ahead of its answer.
	ownConnection(c)
	client, err := rest.HTTPClientFor(c)
	if err != nil {
		fail(err)
	}
	url := c.Host + "/api/v1/namespaces/loadmix-small/configmaps?limit=500"
	go func() {
		var r secondResult
		for time.Now().Before(deadline) {
			start := time.Now()
			if list(client, url) != "" {
				r.requestFailed++
			}
			r.requestSlowest = max(r.requestSlowest, time.Since(start))
			r.requestLatencies = append(r.requestLatencies, time.Since(start))
			start = time.Now()
			cmd := exec.Command("kubectl", "--kubeconfig", kubeconfig, "--as", "second-user", "--as-group", "system:authenticated",
				"get", "configmaps", "-n", "loadmix-small", "--request-timeout", "30s", "-v=6")
			var log bytes.Buffer
			cmd.Stderr = &log
			err := cmd.Run()
			took := time.Since(start)
			r.kubectlRequestSlowest = max(r.kubectlRequestSlowest, kubectlListTime(log.String()))
			r.runs++
			if err != nil {
				r.failed++
			}
			if took > time.Second {
				r.overSecond++
			}
			r.slowest = max(r.slowest, took)
			time.Sleep(time.Second - min(took, time.Second))
		}
		out <- r
	}()
	return out
}

func runWatchers(ctx context.Context, cfg *rest.Config, admin kubernetes.Interface, watchers, creates int, hold time.Duration) {
	ns := fmt.Sprintf("watched-%d", time.Now().UnixNano())
	ensureNamespace(ctx, admin, ns, 0)
	list, err := admin.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		fail(err)
	}
	var received atomic.Int64
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var client *http.Client
	started := time.Now()
	for i := range watchers {
		if i%100 == 0 { // a connection per 100 streams, as the server allows
			if client, err = rest.HTTPClientFor(rest.CopyConfig(cfg)); err != nil {
				fail(err)
			}
		}
		req, _ := http.NewRequestWithContext(wctx, http.MethodGet,
			cfg.Host+"/api/v1/namespaces/"+ns+"/configmaps?watch=true&resourceVersion="+list.ResourceVersion, nil)
		resp, err := client.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			fail(fmt.Errorf("watch %d: %v", i, err))
		}
		go func() {
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 64<<10), 4<<20)
			for sc.Scan() {
				received.Add(1)
			}
		}()
	}
	setup := time.Since(started)
	var next atomic.Int64
	var failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range 8 {
		cs := kubernetes.NewForConfigOrDie(cfg)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(creates); i = next.Add(1) {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i)}, Data: map[string]string{"k": "v"}}
				if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	want := int64(watchers) * int64(creates)
	for wait := time.Now().Add(2 * time.Minute); received.Load() < want && time.Now().Before(wait); {
		time.Sleep(50 * time.Millisecond)
	}
	delivered := time.Since(start)
	time.Sleep(hold)
	fmt.Printf("watchers: %d watches (set up in %v), %d creates in %v (%.0f/s, %d failed); events received %d of %d, all delivered after %v\n",
		watchers, setup.Round(time.Millisecond), creates, took.Round(time.Millisecond), float64(creates)/took.Seconds(), failed.Load(),
		received.Load(), want, delivered.Round(time.Millisecond))
	_ = admin.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
}

// kubectlListRE is kubectl -v=6's line for the configmaps list it sent:
// `GET https://…/configmaps?limit=500&timeout=30s 200 OK in 12 milliseconds`.
var kubectlListRE = regexp.MustCompile(`GET \S*/configmaps\?\S* \d+ .* in (\d+) milliseconds`)

// kubectlListTime is how long kubectl waited for its list's answer, from
// its -v=6 log; 0 when the log has no such line.
func kubectlListTime(log string) time.Duration {
	var slowest time.Duration
	for _, m := range kubectlListRE.FindAllStringSubmatch(log, -1) {
		ms, _ := strconv.Atoi(m[1])
		slowest = max(slowest, time.Duration(ms)*time.Millisecond)
	}
	return slowest
}
