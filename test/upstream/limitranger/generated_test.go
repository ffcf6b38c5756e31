package limitranger

import (
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/admitd/admitd/pkg/admission"
)

// gen makes random pods, claims and LimitRanges over a small vocabulary of
// resources and quantities: milli-units, binary and decimal suffixes,
// fractions, zeros and values too large for milli-unit arithmetic.
type gen struct{ r *rand.Rand }

const gpu corev1.ResourceName = "example.com/gpu"

var pools = map[corev1.ResourceName][]string{
	corev1.ResourceCPU:              {"0", "10m", "50m", "100m", "250m", "500m", "1", "1.5", "2", "2500m", "4", "0.1", "10P"},
	corev1.ResourceMemory:           {"0", "1Mi", "32Mi", "64Mi", "100M", "128Mi", "1Gi", "1.5Gi", "2G", "4Gi", "1Ei", "10P"},
	corev1.ResourceEphemeralStorage: {"0", "500Mi", "1Gi", "2Gi", "1.5Gi"},
	gpu:                             {"0", "1", "2", "3"},
	corev1.ResourceStorage:          {"0", "500Mi", "1Gi", "1.5Gi", "2Gi", "10Gi", "1T"},
}

var ratios = []string{"1", "1.5", "2", "500m", "3", "10", "1500m"}

var podResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, gpu}

func (g gen) pick(s []string) string { return s[g.r.IntN(len(s))] }

// list is a random list of up to three of names, or nil.
func (g gen) list(names []corev1.ResourceName, ratio bool) corev1.ResourceList {
	if g.r.IntN(4) == 0 {
		return nil
	}
	l := corev1.ResourceList{}
	for _, n := range names {
		if g.r.IntN(len(names)+1) < 2 {
			q := g.pick(pools[n])
			if ratio {
				q = g.pick(ratios)
			}
			l[n] = resource.MustParse(q)
		}
	}
	return l
}

func (g gen) requirements() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: g.list(podResources, false), Limits: g.list(podResources, false)}
}

func (g gen) pod(i int) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "test"}}
	if g.r.IntN(10) == 0 {
		p.Name, p.GenerateName = "", "gen-"
	}
	for j := range 1 + g.r.IntN(3) {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: fmt.Sprintf("c%d", j), Image: "img", Resources: g.requirements()})
	}
	for j := range g.r.IntN(4) {
		c := corev1.Container{Name: fmt.Sprintf("i%d", j), Image: "img", Resources: g.requirements()}
		if g.r.IntN(3) == 0 {
			always := corev1.ContainerRestartPolicyAlways
			c.RestartPolicy = &always
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
	if g.r.IntN(3) == 0 {
		r := corev1.ResourceRequirements{Requests: g.list([]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, gpu}, false),
			Limits: g.list([]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, gpu}, false)}
		p.Spec.Resources = &r
	}
	if g.r.IntN(5) == 0 {
		p.Annotations = map[string]string{"kubernetes.io/limit-ranger": "set before", "other": "x"}
	}
	return p
}

func (g gen) claim(i int) *corev1.PersistentVolumeClaim {
	c := claim(fmt.Sprintf("c%d", i), g.list([]corev1.ResourceName{corev1.ResourceStorage}, false))
	c.Spec.Resources.Limits = g.list([]corev1.ResourceName{corev1.ResourceStorage}, false)
	return c
}

var limitTypes = []corev1.LimitType{corev1.LimitTypeContainer, corev1.LimitTypeContainer, corev1.LimitTypeContainer,
	corev1.LimitTypePod, corev1.LimitTypePod, corev1.LimitTypePersistentVolumeClaim, "openshift.io/Image"}

func (g gen) limitRange(name string) *corev1.LimitRange {
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "test"}}
	for range 1 + g.r.IntN(3) {
		t := limitTypes[g.r.IntN(len(limitTypes))]
		names := podResources
		if t == corev1.LimitTypePersistentVolumeClaim {
			names = []corev1.ResourceName{corev1.ResourceStorage, corev1.ResourceCPU}
		}
		lr.Spec.Limits = append(lr.Spec.Limits, corev1.LimitRangeItem{Type: t,
			Min: g.list(names, false), Max: g.list(names, false), Default: g.list(names, false),
			DefaultRequest: g.list(names, false), MaxLimitRequestRatio: g.list(names, true)})
	}
	if g.r.IntN(2) == 0 {
		legacyscheme.Scheme.Default(lr) // as the server stores it
	}
	return lr
}

func (g gen) request(i int) request {
	r := request{name: fmt.Sprintf("generated %d", i), resource: "pods", op: admission.Create, podLevel: g.r.IntN(4) != 0}
	for j := range g.r.IntN(4) {
		r.ranges = append(r.ranges, g.limitRange(fmt.Sprintf("lr-%c", 'c'-j)))
	}
	if g.r.IntN(10) == 0 && len(r.ranges) > 0 {
		r.ranges[0].Namespace = "elsewhere"
	}
	switch n := g.r.IntN(20); {
	case n < 12:
		r.obj = g.pod(i)
	case n < 15:
		r.op, r.subresource, r.obj, r.old = admission.Update, "resize", g.pod(i), g.pod(i)
	case n < 16:
		r.op, r.obj, r.old = admission.Update, g.pod(i), g.pod(i)
	case n < 17:
		old := g.pod(i)
		now := metav1.Now()
		old.DeletionTimestamp = &now
		r.op, r.subresource, r.obj, r.old = admission.Update, "resize", g.pod(i), old
	case n < 18:
		r.resource, r.obj = "persistentvolumeclaims", g.claim(i)
	default:
		r.resource, r.op, r.obj, r.old = "persistentvolumeclaims", admission.Update, g.claim(i), g.claim(i)
	}
	return r
}

// TestGenerated compares both plugins on generated requests.
func TestGenerated(t *testing.T) {
	g := gen{r: rand.New(rand.NewPCG(1, 37))}
	var rs []request
	for i := range generated {
		rs = append(rs, g.request(i))
	}
	var s stats
	s.compareAll(t, rs)
	t.Logf("%d cases compared: %d refused, %d mutated, %d with several violations in another order, %d distinct outcomes",
		s.cases, s.refused, s.mutated, s.reordered, len(s.outcomes))
	// A generator that stopped reaching the constraints would leave few
	// refusals and few kinds of message.
	if s.refused < generated/5 || s.mutated < generated/5 || len(s.outcomes) < 100 {
		t.Errorf("generated inputs reach too little: %d refused, %d mutated, %d distinct outcomes", s.refused, s.mutated, len(s.outcomes))
	}
	if testing.Verbose() {
		for o, n := range s.outcomes {
			t.Logf("%4d %s", n, o)
		}
	}
}

const generated = 3000
