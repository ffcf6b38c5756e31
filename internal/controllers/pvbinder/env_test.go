package pvbinder

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/admitd/admitd/internal/controllers/controllertest"
)

// waitMetrics waits until the registry's families of the names hold
// exactly want (the Prometheus text format).
func (e *env) waitMetrics(want string, names ...string) {
	e.t.Helper()
	controllertest.Eventually(e.t, 10*time.Second, "metrics "+strings.Join(names, ","), func() (bool, string) {
		err := testutil.GatherAndCompare(e.metrics, strings.NewReader(want), names...)
		return err == nil, fmt.Sprint(err)
	})
}

var ctx = context.Background()

const ns = "default"

// env is an in-process server running the controller with a short
// resync, and an admin client.
type env struct {
	t       *testing.T
	admin   kubernetes.Interface
	metrics *prometheus.Registry
}

func start(t *testing.T) *env {
	t.Helper()
	s := controllertest.Start(t)
	client, recorder := s.Controller(User, Component)
	m, reg := NewMetrics(), prometheus.NewRegistry()
	if err := m.Register(reg); err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{Store: s.Store, Catalogue: s.Catalogue, Client: client, Recorder: recorder, Log: s.Log, ResyncPeriod: 100 * time.Millisecond, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	go c.Run(s.Ctx)
	return &env{t: t, admin: s.Admin, metrics: reg}
}

// volume is a PersistentVolume of size and access modes, a host path one
// of class "" and policy Retain unless change says otherwise.
func volume(name, size string, modes []corev1.PersistentVolumeAccessMode, change ...func(*corev1.PersistentVolume)) *corev1.PersistentVolume {
	v := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
		Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
		AccessModes:                   modes,
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data/" + name}}}}
	for _, f := range change {
		f(v)
	}
	return v
}

// claim is a claim of size and access modes, of class "" unless change
// says otherwise.
func claim(name, size string, modes []corev1.PersistentVolumeAccessMode, change ...func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
	empty := ""
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes:      modes,
		StorageClassName: &empty,
		Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}}}
	for _, f := range change {
		f(c)
	}
	return c
}

var (
	rwo    = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	rwoRWX = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadWriteMany}
)

// createVolumes creates the volumes and waits for the controller to make
// them Available (a volume is created Pending).
func (e *env) createVolumes(volumes ...*corev1.PersistentVolume) {
	e.t.Helper()
	for _, v := range volumes {
		if _, err := e.admin.CoreV1().PersistentVolumes().Create(ctx, v, metav1.CreateOptions{}); err != nil {
			e.t.Fatal(err)
		}
	}
	for _, v := range volumes {
		e.waitVolumePhase(v.Name, corev1.VolumeAvailable)
	}
}

func (e *env) createClaim(c *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
	e.t.Helper()
	created, err := e.admin.CoreV1().PersistentVolumeClaims(ns).Create(ctx, c, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return created
}

func (e *env) createClass(name, provisioner string, mode storagev1.VolumeBindingMode, annotations map[string]string) {
	e.t.Helper()
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}, Provisioner: provisioner, VolumeBindingMode: &mode}
	if _, err := e.admin.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) getVolume(name string) *corev1.PersistentVolume {
	e.t.Helper()
	v, err := e.admin.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

func (e *env) getClaim(name string) *corev1.PersistentVolumeClaim {
	e.t.Helper()
	c, err := e.admin.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// waitBound waits until the claim is Bound to a volume, returning both.
func (e *env) waitBound(name string) (*corev1.PersistentVolumeClaim, *corev1.PersistentVolume) {
	e.t.Helper()
	var c *corev1.PersistentVolumeClaim
	var v *corev1.PersistentVolume
	controllertest.Eventually(e.t, 10*time.Second, "claim "+name+" bound", func() (bool, string) {
		c = e.getClaim(name)
		if c.Status.Phase != corev1.ClaimBound || c.Spec.VolumeName == "" {
			return false, fmt.Sprintf("phase %q volume %q", c.Status.Phase, c.Spec.VolumeName)
		}
		v = e.getVolume(c.Spec.VolumeName)
		return v.Status.Phase == corev1.VolumeBound, "volume phase " + string(v.Status.Phase)
	})
	return c, v
}

// waitVolumePhase waits until the volume has phase.
func (e *env) waitVolumePhase(name string, phase corev1.PersistentVolumePhase) *corev1.PersistentVolume {
	e.t.Helper()
	var v *corev1.PersistentVolume
	controllertest.Eventually(e.t, 10*time.Second, "volume "+name+" "+string(phase), func() (bool, string) {
		v = e.getVolume(name)
		return v.Status.Phase == phase, "phase " + string(v.Status.Phase)
	})
	return v
}

// waitEvent waits for an event of reason and message about the object
// of kind and name, from the controller.
func (e *env) waitEvent(namespace, kind, name, reason, message string) {
	e.t.Helper()
	controllertest.Eventually(e.t, 10*time.Second, fmt.Sprintf("event %s %q on %s %s", reason, message, kind, name), func() (bool, string) {
		evs, err := e.admin.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, ev := range evs.Items {
			if ev.InvolvedObject.Kind != kind || ev.InvolvedObject.Name != name {
				continue
			}
			if ev.Reason == reason && ev.Message == message && ev.Source.Component == Component {
				return true, ""
			}
			seen = append(seen, ev.Reason+": "+ev.Message)
		}
		return false, fmt.Sprintf("events %q", seen)
	})
}

// stays checks for a while that cond keeps holding.
func (e *env) stays(what string, cond func() (bool, string)) {
	e.t.Helper()
	for deadline := time.Now().Add(500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if ok, why := cond(); !ok {
			e.t.Fatalf("%s: %s", what, why)
		}
	}
}

func hasAnnotation(m metav1.Object, key string) bool {
	_, ok := m.GetAnnotations()[key]
	return ok
}

func sameModes(a, b []corev1.PersistentVolumeAccessMode) bool { return slices.Equal(a, b) }
