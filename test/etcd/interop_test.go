package etcd_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/admitd/admitd/internal/server"
)

// kubeAPIServer starts the real kube-apiserver 1.37.2 with its own etcd
// (../shared/tools/kube-apiserver/start.sh) and returns its client config
// and etcd endpoints; it skips the test when the tool or its binaries are
// absent.
func kubeAPIServer(t *testing.T) (*rest.Config, []string) {
	t.Helper()
	if testing.Short() {
		t.Skip("interop with kube-apiserver: skipped in -short")
	}
	tool, err := filepath.Abs("../../../shared/tools/kube-apiserver")
	if dir := os.Getenv("ADMITD_KUBE_APISERVER_TOOL"); dir != "" {
		tool = dir
	}
	if _, serr := os.Stat(filepath.Join(tool, "start.sh")); err != nil || serr != nil {
		t.Skipf("interop with kube-apiserver: no %s/start.sh", tool)
	}
	bin := os.Getenv("KAS_BIN")
	if bin == "" {
		home, _ := os.UserHomeDir()
		bin = filepath.Join(home, ".cache/admitd/kube-apiserver-v1.37.2")
	}
	if _, err := os.Stat(filepath.Join(bin, "kube-apiserver")); err != nil {
		t.Skipf("interop with kube-apiserver: no binaries in %s (build them with %s/build.sh)", bin, tool)
	}
	run := t.TempDir()
	cmd := exec.Command(filepath.Join(tool, "start.sh"), run)
	cmd.Env = append(os.Environ(), "BIN="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("start.sh: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(filepath.Join(tool, "stop.sh"), run).Run() })
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(run, "admin.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS = -1
	return cfg, strings.Split(readEnv(t, filepath.Join(run, "env"))["ETCD_SERVERS"], ",")
}

func readEnv(t *testing.T, path string) map[string]string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[strings.TrimPrefix(k, "export ")] = strings.Trim(v, `"'`)
		}
	}
	return env
}

// interopObject is one object of one kind, as JSON.
type interopObject struct {
	gvr       schema.GroupVersionResource
	namespace string
	json      string
}

// interopObjects are the objects of the test. The RoleBinding's subject
// names its apiGroup: kube-apiserver defaults it for a User, admitd does
// not yet (so the object read back through kube-apiserver would differ).
func interopObjects(name string) []interopObject {
	ns := "interop"
	meta := func(kind, apiVersion string) string {
		return fmt.Sprintf(`"apiVersion":%q,"kind":%q,"metadata":{"name":%q}`, apiVersion, kind, name)
	}
	gvr := func(g, v, r string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: g, Version: v, Resource: r}
	}
	return []interopObject{
		{gvr("", "v1", "configmaps"), ns, `{` + meta("ConfigMap", "v1") + `,"data":{"k":"v"}}`},
		{gvr("", "v1", "secrets"), ns, `{` + meta("Secret", "v1") + `,"stringData":{"k":"v"}}`},
		{gvr("", "v1", "services"), ns, `{` + meta("Service", "v1") + `,"spec":{"clusterIP":"None","ports":[{"port":80}]}}`},
		{gvr("", "v1", "serviceaccounts"), ns, `{` + meta("ServiceAccount", "v1") + `}`},
		{gvr("", "v1", "limitranges"), ns, `{` + meta("LimitRange", "v1") + `,"spec":{"limits":[{"type":"Container","max":{"cpu":"2"}}]}}`},
		{gvr("apps", "v1", "deployments"), ns, `{` + meta("Deployment", "apps/v1") + `,"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`},
		{gvr("rbac.authorization.k8s.io", "v1", "roles"), ns, `{` + meta("Role", "rbac.authorization.k8s.io/v1") + `,"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]}`},
		{gvr("rbac.authorization.k8s.io", "v1", "rolebindings"), ns, `{` + meta("RoleBinding", "rbac.authorization.k8s.io/v1") + `,"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"r"},"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"u"}]}`},
		{gvr("rbac.authorization.k8s.io", "v1", "clusterroles"), "", `{` + meta("ClusterRole", "rbac.authorization.k8s.io/v1") + `,"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["list"]}]}`},
		{gvr("coordination.k8s.io", "v1", "leases"), ns, `{` + meta("Lease", "coordination.k8s.io/v1") + `,"spec":{"holderIdentity":"h"}}`},
		{gvr("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations"), "", `{` + meta("ValidatingWebhookConfiguration", "admissionregistration.k8s.io/v1") + `}`},
		{gvr("scheduling.k8s.io", "v1", "priorityclasses"), "", `{` + meta("PriorityClass", "scheduling.k8s.io/v1") + `,"value":1000}`},
		{gvr("networking.k8s.io", "v1", "networkpolicies"), ns, `{` + meta("NetworkPolicy", "networking.k8s.io/v1") + `,"spec":{"podSelector":{}}}`},
		{gvr("policy", "v1", "poddisruptionbudgets"), ns, `{` + meta("PodDisruptionBudget", "policy/v1") + `,"spec":{"minAvailable":1}}`},
		{gvr("stable.example.com", "v1", "crontabs"), ns, `{` + meta("CronTab", "stable.example.com/v1") + `,"spec":{"cronSpec":"* * * * *"}}`},
	}
}

const crontabCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"crontabs.stable.example.com"},
"spec":{"group":"stable.example.com","scope":"Namespaced",
"names":{"plural":"crontabs","singular":"crontab","kind":"CronTab"},
"versions":[{"name":"v1","served":true,"storage":true,
"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"cronSpec":{"type":"string"}}}}}}}]}}`

// TestInteropWithKubeAPIServer runs admitd and kube-apiserver 1.37.2 over
// one etcd: objects of 14 built-in kinds and a custom resource created
// through either are read, listed, watched, updated and deleted through
// the other.
func TestInteropWithKubeAPIServer(t *testing.T) {
	kasCfg, endpoints := kubeAPIServer(t)
	kas := dynamic.NewForConfigOrDie(kasCfg)
	ctx := t.Context()
	create(t, kas, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"interop"}}`)
	// The CRD exists before admitd starts: admitd loads CRDs at start and
	// on its own writes; one created later through another server is not
	// served until admitd restarts (several instances: not done yet).
	create(t, kas, schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, "", crontabCRD)
	crontabs := schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"}
	waitServed(t, kas, crontabs)
	// No controllers, as the kube-apiserver here runs without
	// kube-controller-manager: admitd's Deployment controller would write
	// the test's Deployment between its create and its update.
	srv, _ := startServerWith(t, endpoints, 0, func(o *server.Options) { o.Controllers = []string{} })
	admitd := dynamic.NewForConfigOrDie(srv)
	waitServed(t, admitd, crontabs)
	for _, dir := range []struct {
		name     string
		from, to dynamic.Interface
	}{{"kube-apiserver-to-admitd", kas, admitd}, {"admitd-to-kube-apiserver", admitd, kas}} {
		t.Run(dir.name, func(t *testing.T) {
			for _, o := range interopObjects(dir.name) {
				t.Run(o.gvr.Resource, func(t *testing.T) { crossCheck(ctx, t, o, dir.from, dir.to) })
			}
		})
	}
	t.Run("cluster IPs", func(t *testing.T) { checkSharedClusterIPs(t, kas, admitd) })
}

// checkSharedClusterIPs: admitd allocates cluster IPs as kube-apiserver
// does, as IPAddress objects under kube-apiserver's default ServiceCIDR
// (127.1.0.0/24, which admitd leaves as it is although its own flag says
// 10.0.0.0/24, as kube-apiserver would), so each refuses the addresses the
// other handed out, with the same message.
func checkSharedClusterIPs(t *testing.T, kas, admitd dynamic.Interface) {
	services := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	ipaddresses := schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ipaddresses"}
	svc := func(name, ip string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"Service","metadata":{"name":%q},"spec":{"clusterIP":%q,"ports":[{"port":80}]}}`, name, ip)
	}
	made := create(t, admitd, services, "interop", svc("ip-admitd", ""))
	ip, _, _ := unstructured.NestedString(made.Object, "spec", "clusterIP")
	if !strings.HasPrefix(ip, "127.1.0.") {
		t.Fatalf("admitd allocated %q, want an address of kube-apiserver's ServiceCIDR 127.1.0.0/24", ip)
	}
	held, err := kas.Resource(ipaddresses).Get(t.Context(), ip, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("kube-apiserver reading the IPAddress of admitd's Service: %v", err)
	}
	if parent, _, _ := unstructured.NestedString(held.Object, "spec", "parentRef", "name"); parent != "ip-admitd" {
		t.Errorf("IPAddress %s names %q, want ip-admitd", ip, parent)
	}
	for _, tc := range []struct {
		name         string
		refuser      dynamic.Interface
		holder       dynamic.Interface
		ip, holderIs string
	}{{"kube-apiserver refuses admitd's", kas, nil, ip, "ip-admitd"}, {"admitd refuses kube-apiserver's", admitd, kas, "127.1.0.200", "ip-kas"}} {
		if tc.holder != nil {
			create(t, tc.holder, services, "interop", svc(tc.holderIs, tc.ip))
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(svc("ip-taken", tc.ip))); err != nil {
			t.Fatal(err)
		}
		_, err := tc.refuser.Resource(services).Namespace("interop").Create(t.Context(), u, metav1.CreateOptions{})
		want := fmt.Sprintf(`Service "ip-taken" is invalid: spec.clusterIPs: Invalid value: [%q]: failed to allocate IP %s: provided IP is already allocated`, tc.ip, tc.ip)
		if !apierrors.IsInvalid(err) || err.Error() != want {
			t.Errorf("%s: %v, want %s", tc.name, err, want)
		}
	}
}

// crossCheck creates o through from and checks that to reads, lists,
// watches, updates and deletes it.
func crossCheck(ctx context.Context, t *testing.T, o interopObject, from, to dynamic.Interface) {
	made := create(t, from, o.gvr, o.namespace, o.json)
	name, rv := made.GetName(), made.GetResourceVersion()
	got, err := to.Resource(o.gvr).Namespace(o.namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get through the other server: %v", err)
	}
	if got.GetResourceVersion() != rv || got.GetUID() != made.GetUID() {
		t.Errorf("read back resourceVersion %s uid %s, created %s %s", got.GetResourceVersion(), got.GetUID(), rv, made.GetUID())
	}
	if want, _ := json.Marshal(withoutMeta(made)); string(want) != mustJSON(withoutMeta(got)) {
		t.Errorf("read back %s\nwritten %s", mustJSON(withoutMeta(got)), want)
	}
	list, err := to.Resource(o.gvr).Namespace(o.namespace).List(ctx, metav1.ListOptions{})
	if err != nil || !hasName(list, name) {
		t.Errorf("list through the other server: %v; %s missing", err, name)
	}
	w, err := to.Resource(o.gvr).Namespace(o.namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatalf("watch through the other server: %v", err)
	}
	defer w.Stop()
	made.SetLabels(map[string]string{"changed": "by-writer"})
	if _, err := from.Resource(o.gvr).Namespace(o.namespace).Update(ctx, made, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update through the writer: %v", err)
	}
	select {
	case ev := <-w.ResultChan():
		u, _ := ev.Object.(*unstructured.Unstructured)
		if ev.Type != watch.Modified || u == nil || u.GetLabels()["changed"] != "by-writer" {
			t.Errorf("watch through the other server: %s %v", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("watch through the other server: no event within 10s")
	}
	got, err = to.Resource(o.gvr).Namespace(o.namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.SetLabels(map[string]string{"changed": "by-reader"})
	if _, err := to.Resource(o.gvr).Namespace(o.namespace).Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update through the other server: %v", err)
	}
	back, err := from.Resource(o.gvr).Namespace(o.namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil || back.GetLabels()["changed"] != "by-reader" {
		t.Errorf("writer reads the other server's update: %v %v", err, back.GetLabels())
	}
	if err := to.Resource(o.gvr).Namespace(o.namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete through the other server: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := from.Resource(o.gvr).Namespace(o.namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("writer still reads the object deleted through the other server: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func create(t *testing.T, c dynamic.Interface, gvr schema.GroupVersionResource, ns, data string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(data)); err != nil {
		t.Fatal(err)
	}
	made, err := c.Resource(gvr).Namespace(ns).Create(t.Context(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s: %v", gvr.Resource, err)
	}
	return made
}

func waitServed(t *testing.T, c dynamic.Interface, gvr schema.GroupVersionResource) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := c.Resource(gvr).List(t.Context(), metav1.ListOptions{})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not served within 20s: %v", gvr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// withoutMeta is the object without the server-set fields that may
// legitimately differ between servers (managedFields times).
func withoutMeta(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy().Object
	unstructured.RemoveNestedField(c, "metadata", "managedFields")
	return c
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func hasName(l *unstructured.UnstructuredList, name string) bool {
	for _, u := range l.Items {
		if u.GetName() == name {
			return true
		}
	}
	return false
}
