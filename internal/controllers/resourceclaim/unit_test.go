package resourceclaim

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/controllers/controllertest"
)

func TestGenerateName(t *testing.T) {
	long := strings.Repeat("p", 60)
	for _, c := range []struct{ pod, claim, want string }{
		{"web", "gpu", "web-gpu-"},
		{strings.Repeat("a", 27), strings.Repeat("b", 28), strings.Repeat("a", 27) + "-" + strings.Repeat("b", 28) + "-"}, // 57
		// 58: both cut in proportion, joined without a trailing "-"
		{strings.Repeat("a", 28), strings.Repeat("b", 28), strings.Repeat("a", 27) + "-" + strings.Repeat("b", 27)},
		{long, "gpu", strings.Repeat("p", 52) + "-gp"},
	} {
		if got := generateName(c.pod, c.claim); got != c.want {
			t.Errorf("generateName(%q, %q) = %q, want %q", c.pod, c.claim, got, c.want)
		}
	}
}

func TestPodDone(t *testing.T) {
	now := &metav1.Time{Time: time.Now()}
	for _, c := range []struct {
		name         string
		pod          corev1.Pod
		done, mayRun bool
	}{
		{"pending", corev1.Pod{}, false, true},
		{"succeeded", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}, true, false},
		{"failed", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed}}, true, false},
		{"deleted unscheduled", corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: now}}, true, false},
		{"deleted on a node", corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: now}, Spec: corev1.PodSpec{NodeName: "n"}}, false, true},
	} {
		if got := podDone(&c.pod); got != c.done {
			t.Errorf("%s: podDone = %v, want %v", c.name, got, c.done)
		}
		if got := podNeedsClaims(&c.pod, false); got != c.mayRun {
			t.Errorf("%s: podNeedsClaims = %v, want %v", c.name, got, c.mayRun)
		}
		if podNeedsClaims(&c.pod, true) {
			t.Errorf("%s: a removed pod needs its claims", c.name)
		}
	}
}

// The bootstrap policy lets User (bound to
// system:controller:resource-claim-controller) make every request the
// controller makes: watching pods, applying their status, creating,
// deleting and updating claims and their status, recording events.
// Templates are read from storage here; upstream reads them through
// kube-controller-manager's shared informers, as its own user.
func TestBootstrapRBACCoversTheController(t *testing.T) {
	needed := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"pods/status"}, Verbs: []string{"patch"}},
		{APIGroups: []string{"resource.k8s.io"}, Resources: []string{"resourceclaims"}, Verbs: []string{"get", "list", "watch", "create", "delete", "update"}},
		{APIGroups: []string{"resource.k8s.io"}, Resources: []string{"resourceclaims/status"}, Verbs: []string{"update"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}
	controllertest.RequireBootstrapRBAC(t, User, needed)
}

// counted is m's series, sorted: "creates{labels}=n" and
// "claims{labels}=n", label values in the order upstream declares them.
func counted(t *testing.T, m *Metrics) string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := m.Register(reg); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{"dynamic_resource_allocation_resourceclaim_creates_total": "creates", "dynamic_resource_allocation_resource_claims": "claims"}
	order := map[string][]string{"creates": {"status", "admin_access", "owner_api_group", "owner_api_kind"}, "claims": {"allocated", "admin_access", "source"}}
	var out []string
	for _, f := range families {
		short := names[f.GetName()]
		for _, metric := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range metric.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			var values []string
			for _, name := range order[short] {
				values = append(values, labels[name])
			}
			v := metric.GetCounter().GetValue() + metric.GetGauge().GetValue()
			out = append(out, fmt.Sprintf("%s{%s}=%v", short, strings.Join(values, ","), v))
		}
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}
