package resourcequota_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	"github.com/admitd/admitd/pkg/admission/plugins/resourcequota"
	"github.com/admitd/admitd/pkg/quota"
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func rq(name string, hard, used corev1.ResourceList) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: "1"},
		Spec:       corev1.ResourceQuotaSpec{Hard: hard},
		Status:     corev1.ResourceQuotaStatus{Hard: hard, Used: used},
	}
}

func pod(name string, requests corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: requests}}}}}
}

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
}

func newPlugin(t *testing.T, c *admissiontest.Cluster, cfg string) admission.Handler {
	t.Helper()
	r := admission.NewRegistry()
	resourcequota.Register(r)
	pc := c.Plugins(admission.PluginContext{})
	if cfg != "" {
		pc.Config = strings.NewReader(cfg)
	}
	chain, err := r.NewChain([]string{resourcequota.Name}, pc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return chain
}

func TestDecisions(t *testing.T) {
	c := admissiontest.NewCluster(
		rq("q", rl("requests.cpu", "1"), rl("requests.cpu", "800m")),
	)
	admissiontest.Run(t, newPlugin(t, c, ""), []admissiontest.Case{
		{Name: "exceeded", Attributes: admissiontest.Create(pod("p", rl("cpu", "300m"))).Attributes(),
			WantErr: `pods "p" is forbidden: exceeded quota: q, requested: requests.cpu=300m, used: requests.cpu=800m, limited: requests.cpu=1`, WantCode: 403},
		{Name: "constraint", Attributes: admissiontest.Create(pod("p", nil)).Attributes(),
			WantErr: `pods "p" is forbidden: failed quota: q: must specify requests.cpu for: c`, WantCode: 403},
		{Name: "configmap not tracked", Attributes: admissiontest.Create(configMap("cm")).Attributes()},
	})
	c2 := admissiontest.NewCluster(rq("q", rl("configmaps", "5"), nil))
	admissiontest.Run(t, newPlugin(t, c2, ""), []admissiontest.Case{
		{Name: "status unknown", Attributes: admissiontest.Create(configMap("cm")).Attributes(),
			WantErr: `configmaps "cm" is forbidden: status unknown for quota: q, resources: configmaps`, WantCode: 403},
	})
}

func TestChargesBeforeAdmitting(t *testing.T) {
	c := admissiontest.NewCluster(rq("q", rl("configmaps", "2", "count/configmaps", "5"), rl("configmaps", "0", "count/configmaps", "0")))
	h := newPlugin(t, c, "").(admission.Validator)
	for i, want := range []string{"", "", "exceeded quota: q, requested: configmaps=1, used: configmaps=2, limited: configmaps=2"} {
		a := admissiontest.Create(configMap(fmt.Sprint("cm", i))).Attributes()
		a.Record = admission.NewRecord()
		err := h.Validate(context.Background(), a)
		if got := errText(err); !strings.Contains(got, want) || (want == "") != (err == nil) {
			t.Fatalf("create %d: %v, want %q", i, err, want)
		}
	}
	got := used(t, c, "q")
	if !quota.Equal(got, rl("configmaps", "2", "count/configmaps", "2")) {
		t.Fatalf("used = %v", got)
	}
	dry := admissiontest.Create(configMap("dry")).DryRun().Attributes()
	dry.Record = admission.NewRecord()
	if err := h.Validate(context.Background(), dry); err == nil || !strings.Contains(err.Error(), "exceeded quota") {
		t.Fatalf("dry run over the quota: %v", err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func used(t *testing.T, c *admissiontest.Cluster, name string) corev1.ResourceList {
	t.Helper()
	o, err := c.GetObject(context.Background(), corev1.SchemeGroupVersion.WithResource("resourcequotas"), "ns", name)
	if err != nil {
		t.Fatal(err)
	}
	return o.(*corev1.ResourceQuota).Status.Used
}

// conflicting makes every other status write fail with a conflict, as when
// another writer (the quota controller) got there first.
type conflicting struct {
	*admissiontest.Cluster
	mu sync.Mutex
	n  int
}

func (c *conflicting) UpdateObjectStatus(ctx context.Context, gvr schemaGVR, ns string, obj runtimeObject) (runtimeObject, error) {
	c.mu.Lock()
	c.n++
	fail := c.n%2 == 1
	c.mu.Unlock()
	if fail {
		return nil, apierrors.NewConflict(gvr.GroupResource(), "q", fmt.Errorf("the object has been modified"))
	}
	return c.Cluster.UpdateObjectStatus(ctx, gvr, ns, obj)
}

func TestConcurrentCreatesNeverOvershoot(t *testing.T) {
	for _, withConflicts := range []bool{false, true} {
		c := admissiontest.NewCluster(rq("q", rl("pods", "7", "requests.cpu", "10"), rl("pods", "0", "requests.cpu", "0")))
		pc := c.Plugins(admission.PluginContext{})
		if withConflicts {
			pc.Status = &conflicting{Cluster: c}
		}
		r := admission.NewRegistry()
		resourcequota.Register(r)
		chain, err := r.NewChain([]string{resourcequota.Name}, pc, nil)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		admitted, refused := 0, 0
		for i := 0; i < 32; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := admissiontest.Create(pod(fmt.Sprint("p", i), rl("cpu", "1"))).Attributes()
				a.Record = admission.NewRecord()
				err := chain.Validate(context.Background(), a)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					admitted++
				case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota"):
					refused++
				default:
					t.Errorf("unexpected error: %v", err)
				}
			}()
		}
		wg.Wait()
		if admitted != 7 || refused != 25 {
			t.Errorf("conflicts %v: admitted %d refused %d, want 7 and 25", withConflicts, admitted, refused)
		}
		if got := used(t, c, "q"); !quota.Equal(got, rl("pods", "7", "requests.cpu", "7")) {
			t.Errorf("conflicts %v: used = %v", withConflicts, got)
		}
	}
}

func TestConfiguration(t *testing.T) {
	cfg := `apiVersion: apiserver.config.k8s.io/v1
kind: ResourceQuotaConfiguration
limitedResources:
- resource: pods
  matchContains: ["requests.cpu"]
`
	c := admissiontest.NewCluster()
	admissiontest.Run(t, newPlugin(t, c, cfg), []admissiontest.Case{
		{Name: "no covering quota", Attributes: admissiontest.Create(pod("p", rl("cpu", "1"))).Attributes(),
			WantErr: `pods "p" is forbidden: insufficient quota to consume: requests.cpu`, WantCode: 403},
		{Name: "nothing limited consumed", Attributes: admissiontest.Create(pod("p", rl("memory", "1Gi"))).Attributes()},
	})
	for _, bad := range []string{
		"apiVersion: apiserver.config.k8s.io/v1\nkind: ResourceQuotaConfiguration\nlimitedResources:\n- matchContains: [x]\n",
		"apiVersion: apiserver.config.k8s.io/v1\nkind: ResourceQuotaConfiguration\nbogus: 1\n",
	} {
		r := admission.NewRegistry()
		resourcequota.Register(r)
		pc := c.Plugins(admission.PluginContext{Config: strings.NewReader(bad)})
		if _, err := r.NewChain([]string{resourcequota.Name}, pc, nil); err == nil {
			t.Errorf("configuration %q accepted", bad)
		}
	}
}

type (
	schemaGVR     = schema.GroupVersionResource
	runtimeObject = runtime.Object
)
