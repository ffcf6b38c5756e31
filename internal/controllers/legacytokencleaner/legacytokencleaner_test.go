package legacytokencleaner

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/controllers/controllertest"
)

const period = time.Hour

// clock is the controller's time: the real one moved on by an offset the
// test sets, as the tokens' creation times are the server's real ones.
type clock struct{ offset atomic.Int64 }

func (c *clock) now() time.Time             { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *clock) set(d time.Duration)        { c.offset.Store(int64(d)) }
func (c *clock) day(d time.Duration) string { return time.Now().Add(d).UTC().Format(dateLayout) }

// start runs the controller, passing every 50ms with a one-hour period,
// on a server where kube-apiserver has tracked legacy tokens since
// trackedSince.
func start(t *testing.T, trackedSince string) (*controllertest.Server, *clock) {
	t.Helper()
	s := controllertest.Start(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: metav1.NamespaceSystem}}
	if _, err := s.Admin.CoreV1().Namespaces().Create(s.Ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: trackingConfigMap, Namespace: metav1.NamespaceSystem},
		Data: map[string]string{trackingSinceKey: trackedSince}}
	if _, err := s.Admin.CoreV1().ConfigMaps(metav1.NamespaceSystem).Create(s.Ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	clk := &clock{}
	c, err := New(Config{Store: s.Store, Catalogue: s.Catalogue, Client: s.Client(User), Log: s.Log,
		CleanUpPeriod: period, SyncInterval: 50 * time.Millisecond, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	go c.Run(s.Ctx)
	return s, clk
}

// createTokens makes the ServiceAccount builder, listing the Secrets
// listed, and a legacy token Secret per entry of labels, with those
// labels.
func createTokens(t *testing.T, s *controllertest.Server, listed []string, labels map[string]map[string]string) {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder", Namespace: "default"}}
	for _, name := range listed {
		sa.Secrets = append(sa.Secrets, corev1.ObjectReference{Name: name})
	}
	sa, err := s.Admin.CoreV1().ServiceAccounts("default").Create(s.Ctx, sa, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(maps.Keys(labels)) {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels[name],
			Annotations: map[string]string{corev1.ServiceAccountNameKey: "builder", corev1.ServiceAccountUIDKey: string(sa.UID)}},
			Type: corev1.SecretTypeServiceAccountToken}
		if name == "wrong-uid" {
			secret.Annotations[corev1.ServiceAccountUIDKey] = "another"
		}
		if _, err := s.Admin.CoreV1().Secrets("default").Create(s.Ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// tokens describes the legacy tokens of default: each one's invalid-since
// label, sorted by name.
func tokens(s *controllertest.Server) string {
	list, err := s.Admin.CoreV1().Secrets("default").List(s.Ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, secret := range list.Items {
		out = append(out, fmt.Sprintf("%s:%s", secret.Name, secret.Labels[InvalidSinceLabel]))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

func waitTokens(t *testing.T, s *controllertest.Server, want string) {
	t.Helper()
	controllertest.Eventually(t, 10*time.Second, "legacy tokens", func() (bool, string) {
		got := tokens(s)
		return got == want, fmt.Sprintf("%s, want %s", got, want)
	})
}

// An unused auto-generated token is labelled invalid since today, then
// deleted once it has been invalid for the period; tokens used within the
// period, with a last-used label that is no date, mounted by a pod, not
// listed by their ServiceAccount or annotated with another uid are left
// alone.
func TestUnusedTokensAreLabelledThenDeleted(t *testing.T) {
	s, clk := start(t, "2020-01-01")
	clk.set(-48 * time.Hour) // the tokens are created after "now": none is old enough
	listed := []string{"unused", "used-today", "bad-last-used", "mounted", "old-invalid", "wrong-uid"}
	createTokens(t, s, listed, map[string]map[string]string{
		"unused": nil, "not-listed": nil, "wrong-uid": nil, "mounted": nil,
		"used-today":    {LastUsedLabel: clk.day(48 * time.Hour)},
		"bad-last-used": {LastUsedLabel: "yesterday"},
		"old-invalid":   {InvalidSinceLabel: "2020-01-02"},
	})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Volumes: []corev1.Volume{{Name: "t", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "mounted"}}}}}}
	if _, err := s.Admin.CoreV1().Pods("default").Create(s.Ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	untouched := "bad-last-used: mounted: not-listed: old-invalid:2020-01-02 unused: used-today: wrong-uid:"
	time.Sleep(300 * time.Millisecond)
	if got := tokens(s); got != untouched {
		t.Fatalf("tokens younger than the period: %s, want %s", got, untouched)
	}

	clk.set(48 * time.Hour)
	today := clk.day(48 * time.Hour)
	labelled := "bad-last-used: mounted: not-listed: unused:" + today + " used-today: wrong-uid:"
	waitTokens(t, s, labelled)
	time.Sleep(300 * time.Millisecond) // a token invalid since today is kept
	if got := tokens(s); got != labelled {
		t.Fatalf("tokens invalid since today: %s, want %s", got, labelled)
	}

	// unused has been invalid for more than the period; used-today has
	// not been used since
	clk.set(5 * 24 * time.Hour)
	waitTokens(t, s, "bad-last-used: mounted: not-listed: used-today:"+clk.day(5*24*time.Hour)+" wrong-uid:")
}

// Nothing is labelled before kube-apiserver has tracked the tokens' use
// for the whole period from the day after the ConfigMap's date.
func TestNothingIsCleanedBeforeTrackingCoversThePeriod(t *testing.T) {
	s, clk := start(t, time.Now().UTC().Format(dateLayout))
	clk.set(2 * time.Hour) // old enough tokens, but tracked only from tomorrow
	createTokens(t, s, []string{"unused"}, map[string]map[string]string{"unused": nil})
	time.Sleep(300 * time.Millisecond)
	if got, want := tokens(s), "unused:"; got != want {
		t.Fatalf("before tracking covers the period: %s, want %s", got, want)
	}
	clk.set(50 * time.Hour)
	waitTokens(t, s, "unused:"+clk.day(50*time.Hour))
}

// kube-controller-manager refuses to start the controller without a
// positive period.
func TestNewRefusesNonPositivePeriod(t *testing.T) {
	for _, p := range []time.Duration{0, -time.Second} {
		if _, err := New(Config{CleanUpPeriod: p}); err == nil {
			t.Errorf("New(CleanUpPeriod: %v) = nil error, want one", p)
		}
	}
}

func TestPodSecretNames(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}, {Name: ""}},
		InitContainers:   []corev1.Container{{EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "init-from"}}}}}},
		Containers: []corev1.Container{{Env: []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "env"}, Key: "k"}}}}}},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "debug"}}}}}}},
		Volumes: []corev1.Volume{
			{VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "vol"}}},
			{VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "proj"}}}, {ServiceAccountToken: &corev1.ServiceAccountTokenProjection{}}}}}},
			{VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{NodePublishSecretRef: &corev1.LocalObjectReference{Name: "csi"}}}},
			{VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "not-a-secret"}}}},
		},
	}}
	want := []string{"pull", "init-from", "env", "debug", "vol", "proj", "csi"}
	if got := PodSecretNames(pod); !slices.Equal(got, want) {
		t.Errorf("PodSecretNames() = %q, want %q", got, want)
	}
}
