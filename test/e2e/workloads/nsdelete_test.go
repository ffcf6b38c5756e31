package workloads

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/admitd/admitd/test/e2e/harness"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// nsDeleteRecordKubeconfig, when set, is the kubeconfig of kube-apiserver +
// kube-controller-manager 1.37.2 (KCM=1 start.sh): the namespace deletion
// session runs there and is written to nsDeleteSessionFile.
const (
	nsDeleteRecordKubeconfig = "NSDELETE_RECORD_KUBECONFIG"
	nsDeleteSessionFile      = "testdata/nsdelete/kcm-1.37.2.txt"
	// nsDeleteBulk is how many plain ConfigMaps the namespace holds: more
	// than two of the namespace controller's pages of 500.
	nsDeleteBulk = 1200
)

// nsDeleteCMJSONPath prints a ConfigMap of the garbage collector's cases:
// its owners, finalizers and whether it is being deleted.
const nsDeleteCMJSONPath = `{range .items[*]}{.metadata.name} owners=[{range .metadata.ownerReferences[*]}{.kind}/{.name} controller={.controller} block={.blockOwnerDeletion};{end}]` +
	` finalizers={.metadata.finalizers} deleting={.metadata.deletionGracePeriodSeconds}{"\n"}{end}`

// nsDeleteConditionsJSONPath prints a namespace's phase and conditions
// (without their times).
const nsDeleteConditionsJSONPath = `phase={.status.phase} finalizers={.spec.finalizers}{"\n"}` +
	`{range .status.conditions[*]}  {.type} {.status} {.reason} "{.message}"{"\n"}{end}`

// nsDeleteEventsJSONPath prints what a user sees of an Event but its
// time and count; blankGenerated blanks the generated names and uids in
// its message.
const nsDeleteEventsJSONPath = `{range .items[*]}{.type} {.reason} {.involvedObject.kind}` +
	` source={.source.component} reporting={.reportingComponent} "{.message}"{"\n"}{end}`

var (
	generatedUID     = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	generatedWebName = regexp.MustCompile(`\bweb-[a-z0-9]+(-[a-z0-9]{5})?\b`)
)

// blankGenerated blanks the uids and the generated names of the
// Deployment's ReplicaSet and pods in s.
func blankGenerated(s string) string {
	return generatedWebName.ReplaceAllStringFunc(generatedUID.ReplaceAllString(s, "UID"), func(m string) string {
		if strings.Count(m, "-") == 2 {
			return "web-HASH-POD"
		}
		return "web-HASH"
	})
}

type nsDeleteSession struct {
	t      *testing.T
	a      *admitd
	c      kubernetes.Interface
	ns     string
	record bool
	out    []string
}

// The namespace deletion session recorded on kube-apiserver +
// kube-controller-manager 1.37.2 (testdata/nsdelete) and replayed on
// admitd: the garbage collector's dangling and cross-namespace owner
// cases, then foreground (held by a finalizer half way), background and
// orphan deletion; a
// Deployment of 3 replicas and the Events of its controllers and of the
// collector; then the namespace, with 1,200 ConfigMaps and one held by a
// finalizer, is deleted: its conditions while the held one stays, and
// that it goes once the finalizer is removed.
func TestNamespaceDeletionSessionMatchesKCM(t *testing.T) {
	t.Parallel()
	s := startNSDeleteSession(t)
	s.gcCases()
	s.deployment()
	s.events()
	s.deleteNamespace()
	harness.RecordOrCompare(t, s.record, nsDeleteSessionFile, strings.Join(s.out, ""))
}

func startNSDeleteSession(t *testing.T) *nsDeleteSession {
	s := &nsDeleteSession{t: t, ns: "nsdelete"}
	if kc := os.Getenv(nsDeleteRecordKubeconfig); kc != "" {
		s.a, s.record = &admitd{Kubeconfig: kc, Stderr: &harness.Output{}}, true
	} else {
		s.a = startAdmitd(t, t.TempDir())
	}
	s.c = kubernetes.NewForConfigOrDie(s.a.RestConfig(t))
	s.kubectl("create", "namespace", s.ns)
	s.kubectl("create", "namespace", s.ns+"-other")
	t.Cleanup(func() { _, _, _ = s.a.Kubectl(t, "", "delete", "namespace", s.ns+"-other", "--wait=false") })
	s.waitFor("the default service account", 30*time.Second, func() bool {
		_, err := s.c.CoreV1().ServiceAccounts(s.ns).Get(t.Context(), "default", metav1.GetOptions{})
		return err == nil
	})
	return s
}

func (s *nsDeleteSession) kubectl(args ...string) string {
	s.t.Helper()
	return s.a.MustKubectl(s.t, "", args...)
}

func (s *nsDeleteSession) printf(format string, args ...any) {
	s.out = append(s.out, fmt.Sprintf(format, args...))
}

// waitFor polls done every 100 ms until it holds or timeout passes, and
// says whether it held (the session then prints what it sees either way).
func (s *nsDeleteSession) waitFor(what string, timeout time.Duration, done func() bool) bool {
	s.t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if done() {
			return true
		}
	}
	s.t.Errorf("timed out waiting for %s", what)
	return false
}

// configMap creates a ConfigMap of the garbage collector's cases owned by
// owners (blocking their deletion when block) and returns it.
func (s *nsDeleteSession) configMap(ns, name string, finalizers []string, block bool, owners ...*corev1.ConfigMap) *corev1.ConfigMap {
	s.t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"case": "gc"}, Finalizers: finalizers}}
	for _, o := range owners {
		cm.OwnerReferences = append(cm.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: o.Name, UID: o.UID, BlockOwnerDeletion: &block})
	}
	cm, err := s.c.CoreV1().ConfigMaps(ns).Create(s.t.Context(), cm, metav1.CreateOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	return cm
}

func (s *nsDeleteSession) gone(name string) func() bool {
	return func() bool {
		_, err := s.c.CoreV1().ConfigMaps(s.ns).Get(s.t.Context(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}
}

func (s *nsDeleteSession) gcConfigMaps() string {
	return s.kubectl("-n", s.ns, "get", "configmaps", "-l", "case=gc", "-o", "jsonpath="+nsDeleteCMJSONPath)
}

// gcCases runs the garbage collector's cases and prints the ConfigMaps
// they leave.
func (s *nsDeleteSession) gcCases() {
	const hold = "example.com/hold"
	// foreground: fg <- fg-dep <- fg-dep-2 (held), each blocking
	fg := s.configMap(s.ns, "fg", nil, false)
	fgDep := s.configMap(s.ns, "fg-dep", nil, true, fg)
	s.configMap(s.ns, "fg-dep-2", []string{hold}, true, fgDep)
	// background: bg <- bg-dep <- bg-dep-2
	bg := s.configMap(s.ns, "bg", nil, false)
	s.configMap(s.ns, "bg-dep-2", nil, false, s.configMap(s.ns, "bg-dep", nil, false, bg))
	// orphan: or-dep is owned by or and keep; keep-dep by keep
	or := s.configMap(s.ns, "or", nil, false)
	keep := s.configMap(s.ns, "keep", nil, false)
	s.configMap(s.ns, "or-dep", nil, true, or, keep)
	s.configMap(s.ns, "keep-dep", nil, false, keep)
	// dangling: an owner that never existed
	s.configMap(s.ns, "dangling", nil, false, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "nobody", UID: "00000000-0000-0000-0000-000000000001"}})
	// an owner in another namespace
	s.configMap(s.ns, "cross-ns", nil, false, s.configMap(s.ns+"-other", "elsewhere", nil, false))

	for _, name := range []string{"dangling", "cross-ns"} {
		s.waitFor(name+" deleted", 30*time.Second, s.gone(name))
	}
	s.kubectl("-n", s.ns, "delete", "configmap", "fg", "--cascade=foreground", "--wait=false")
	s.waitFor("fg-dep-2 being deleted", 30*time.Second, func() bool {
		cm, err := s.c.CoreV1().ConfigMaps(s.ns).Get(s.t.Context(), "fg-dep-2", metav1.GetOptions{})
		return err == nil && cm.DeletionTimestamp != nil
	})
	s.printf("## foreground deletion of fg, fg-dep-2 held by %s\n%s", hold, s.gcConfigMaps())
	s.kubectl("-n", s.ns, "patch", "configmap", "fg-dep-2", "--type=json", `-p=[{"op":"remove","path":"/metadata/finalizers"}]`)
	s.kubectl("-n", s.ns, "delete", "configmap", "bg")
	s.kubectl("-n", s.ns, "delete", "configmap", "or", "--cascade=orphan")
	for _, name := range []string{"fg", "fg-dep", "fg-dep-2", "bg-dep", "bg-dep-2"} {
		s.waitFor(name+" deleted", 30*time.Second, s.gone(name))
	}
	s.waitFor("or-dep orphaned", 30*time.Second, func() bool {
		cm, err := s.c.CoreV1().ConfigMaps(s.ns).Get(s.t.Context(), "or-dep", metav1.GetOptions{})
		return err == nil && len(cm.OwnerReferences) == 1
	})
	s.printf("## after foreground (released), background and orphan deletion\n%s", s.gcConfigMaps())
}

// deployment creates a Deployment of 3 replicas and prints what its
// controllers make.
func (s *nsDeleteSession) deployment() {
	s.kubectl("-n", s.ns, "create", "deployment", "web", "--image=nginx", "--replicas=3")
	s.waitFor("3 pods", 30*time.Second, func() bool {
		pods, err := s.c.CoreV1().Pods(s.ns).List(s.t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
		return err == nil && len(pods.Items) == 3
	})
	rs := s.kubectl("-n", s.ns, "get", "replicasets", "-o",
		`jsonpath={range .items[*]}replicaset owners=[{range .metadata.ownerReferences[*]}{.kind}/{.name} controller={.controller} block={.blockOwnerDeletion};{end}] replicas={.spec.replicas}{"\n"}{end}`)
	pods := s.kubectl("-n", s.ns, "get", "pods", "-o",
		`jsonpath={range .items[*]}pod owners=[{range .metadata.ownerReferences[*]}{.kind} controller={.controller} block={.blockOwnerDeletion};{end}] phase={.status.phase}{"\n"}{end}`)
	s.printf("## deployment web, 3 replicas\n%s%s", rs, pods)
}

// events waits for the controllers' Events and prints them sorted.
func (s *nsDeleteSession) events() {
	want := map[string]int{"ScalingReplicaSet": 1, "SuccessfulCreate": 3, "OwnerRefInvalidNamespace": 1}
	var lines []string
	s.waitFor("the controllers' events", 30*time.Second, func() bool {
		got := blankGenerated(strings.TrimSpace(s.kubectl("-n", s.ns, "get", "events", "-o", "jsonpath="+nsDeleteEventsJSONPath)))
		lines = strings.Split(got, "\n")
		count := map[string]int{}
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 1 {
				count[f[1]]++
			}
		}
		for reason, n := range want {
			if count[reason] < n {
				return false
			}
		}
		return true
	})
	sort.Strings(lines)
	s.printf("## events\n%s\n", strings.Join(lines, "\n"))
}

// deleteNamespace fills the namespace with nsDeleteBulk ConfigMaps and
// one held by a finalizer, deletes it, prints its conditions while the
// held one stays, releases it and waits for the namespace to go.
func (s *nsDeleteSession) deleteNamespace() {
	s.createBulk()
	s.configMap(s.ns, "held", []string{"example.com/hold"}, false)
	s.kubectl("delete", "namespace", s.ns, "--wait=false")
	var conditions string
	s.waitFor("only the held ConfigMap left", 60*time.Second, func() bool {
		conditions = s.kubectl("get", "namespace", s.ns, "-o", "jsonpath="+nsDeleteConditionsJSONPath)
		return strings.Contains(conditions, `"Some resources are remaining: configmaps. has 1 resource instances"`) &&
			strings.Contains(conditions, `"Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"`)
	})
	left := s.kubectl("-n", s.ns, "get", "all,configmaps,events", "-o", "name")
	s.printf("## namespace deleted, held ConfigMap left\n%sleft:\n%s", conditions, left)
	s.kubectl("-n", s.ns, "patch", "configmap", "held", "--type=json", `-p=[{"op":"remove","path":"/metadata/finalizers"}]`)
	s.kubectl("wait", "--for=delete", "namespace/"+s.ns, "--timeout=60s")
	_, errOut, err := s.a.Kubectl(s.t, "", "get", "namespace", s.ns)
	s.printf("## namespace after the finalizer is removed\nerr=%v %s", err != nil, errOut)
}

// createBulk creates nsDeleteBulk ConfigMaps, eight at a time.
func (s *nsDeleteSession) createBulk() {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < nsDeleteBulk; i += 8 {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bulk-%04d", i)}, Data: map[string]string{"i": fmt.Sprint(i)}}
				if _, err := s.c.CoreV1().ConfigMaps(s.ns).Create(s.t.Context(), cm, metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		s.t.Fatal(err)
	}
}
