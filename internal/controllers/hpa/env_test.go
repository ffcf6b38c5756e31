package hpa

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/controllers/controllertest"
)

var ctx = context.Background()

const ns = "default"

// env is an in-process server running the controller with a short sync
// period, and an admin client.
type env struct {
	t       *testing.T
	server  *controllertest.Server
	admin   kubernetes.Interface
	metrics *prometheus.Registry
}

func start(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	e.run(Config{})
	return e
}

func newEnv(t *testing.T) *env {
	t.Helper()
	s := controllertest.Start(t)
	return &env{t: t, server: s, admin: s.Admin, metrics: prometheus.NewRegistry()}
}

// run starts a controller of cfg (its server, clients and a 200 ms sync
// period filled in).
func (e *env) run(cfg Config) *Controller {
	e.t.Helper()
	s := e.server
	_, recorder := s.Controller(User, Component)
	m := NewMetrics()
	if err := m.Register(e.metrics); err != nil {
		e.t.Fatal(err)
	}
	cfg.Store, cfg.Catalogue, cfg.Recorder, cfg.Log, cfg.Metrics = s.Store, s.Catalogue, recorder, s.Log, m
	if cfg.Transport == nil {
		cfg.Transport = s.Loopback(User)
	}
	if cfg.SyncPeriod == 0 {
		cfg.SyncPeriod = 200 * time.Millisecond
	}
	c, err := New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	go c.Run(s.Ctx)
	return c
}

var appLabels = map[string]string{"app": "web"}

func (e *env) createDeployment(name string, replicas int32) {
	e.t.Helper()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: appLabels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: appLabels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}}
	if _, err := e.admin.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// autoscaler is an HPA of the Deployment target between min and max,
// on 80% CPU utilization unless change says otherwise.
func autoscaler(name, target string, minReplicas *int32, maxReplicas int32, change ...func(*autoscalingv2.HorizontalPodAutoscaler)) *autoscalingv2.HorizontalPodAutoscaler {
	h := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: target},
		MinReplicas:    minReplicas, MaxReplicas: maxReplicas,
		Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)}}}}}}
	for _, f := range change {
		f(h)
	}
	return h
}

func (e *env) createAutoscaler(h *autoscalingv2.HorizontalPodAutoscaler) {
	e.t.Helper()
	if _, err := e.admin.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, h, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) getAutoscaler(name string) *autoscalingv2.HorizontalPodAutoscaler {
	e.t.Helper()
	h, err := e.admin.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

func (e *env) replicasOf(deployment string) int32 {
	e.t.Helper()
	d, err := e.admin.AppsV1().Deployments(ns).Get(ctx, deployment, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return *d.Spec.Replicas
}

// waitReplicas waits until the Deployment's spec.replicas is n.
func (e *env) waitReplicas(deployment string, n int32) {
	e.t.Helper()
	controllertest.Eventually(e.t, 10*time.Second, fmt.Sprintf("deployment %s at %d replicas", deployment, n), func() (bool, string) {
		got := e.replicasOf(deployment)
		return got == n, fmt.Sprintf("replicas %d", got)
	})
}

// cond is a condition without its transition time.
type cond struct {
	Type    autoscalingv2.HorizontalPodAutoscalerConditionType
	Status  corev1.ConditionStatus
	Reason  string
	Message string
}

func conditionsOf(h *autoscalingv2.HorizontalPodAutoscaler) []cond {
	var out []cond
	for _, c := range h.Status.Conditions {
		if c.LastTransitionTime.IsZero() {
			out = append(out, cond{Type: "no transition time " + c.Type})
			continue
		}
		out = append(out, cond{c.Type, c.Status, c.Reason, c.Message})
	}
	return out
}

// waitConditions waits until the autoscaler's conditions are want (in
// order) and check holds for its status, returning it.
func (e *env) waitConditions(name string, want []cond, check func(autoscalingv2.HorizontalPodAutoscalerStatus) (bool, string)) *autoscalingv2.HorizontalPodAutoscaler {
	e.t.Helper()
	var h *autoscalingv2.HorizontalPodAutoscaler
	controllertest.Eventually(e.t, 10*time.Second, "autoscaler "+name+" status", func() (bool, string) {
		h = e.getAutoscaler(name)
		got := conditionsOf(h)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return false, fmt.Sprintf("conditions\n%v\nwant\n%v", got, want)
		}
		if check == nil {
			return true, ""
		}
		return check(h.Status)
	})
	return h
}

// waitEvent waits for an event of type, reason and message about the
// autoscaler, from the controller.
func (e *env) waitEvent(name, typ, reason, message string) {
	e.t.Helper()
	controllertest.Eventually(e.t, 10*time.Second, fmt.Sprintf("event %s %q on %s", reason, message, name), func() (bool, string) {
		evs, err := e.admin.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, ev := range evs.Items {
			if ev.InvolvedObject.Kind != "HorizontalPodAutoscaler" || ev.InvolvedObject.Name != name {
				continue
			}
			if ev.Type == typ && ev.Reason == reason && ev.Message == message && ev.Source.Component == Component {
				return true, ""
			}
			seen = append(seen, ev.Type+" "+ev.Reason+": "+ev.Message)
		}
		return false, fmt.Sprintf("events %q", seen)
	})
}

// waitMetrics waits until the registry's families of the names hold
// exactly want (the Prometheus text format).
func (e *env) waitMetrics(want string, names ...string) {
	e.t.Helper()
	controllertest.Eventually(e.t, 10*time.Second, "metrics "+strings.Join(names, ","), func() (bool, string) {
		err := testutil.GatherAndCompare(e.metrics, strings.NewReader(want), names...)
		return err == nil, fmt.Sprint(err)
	})
}

// counter is the value of the series (name{labels}) in the registry, -1
// when absent.
func (e *env) counter(series string) float64 {
	e.t.Helper()
	families, err := e.metrics.Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			if f.GetName()+"{"+strings.Join(labels, ",")+"}" == series {
				return m.GetCounter().GetValue()
			}
		}
	}
	return -1
}

func (e *env) waitCounter(series string, want float64) {
	e.t.Helper()
	controllertest.Eventually(e.t, 10*time.Second, series, func() (bool, string) {
		got := e.counter(series)
		return got == want, fmt.Sprint(got)
	})
}

func (e *env) waitCounterAtLeast(series string, want float64) {
	e.t.Helper()
	controllertest.Eventually(e.t, 10*time.Second, series, func() (bool, string) {
		got := e.counter(series)
		return got >= want, fmt.Sprint(got)
	})
}
