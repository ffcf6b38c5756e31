package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// admitd serve runs kube-controller-manager's
// legacy-serviceaccount-token-cleaner-controller as its service account,
// through admission: once kube-apiserver's tracking ConfigMap says the
// tokens' use has been tracked for the clean-up period, an unused
// auto-generated legacy token is labelled invalid since today and one
// invalid since long ago is deleted (as kube-controller-manager 1.37.2
// does, test/sidebyside-legacytokencleaner.sh).
func TestLegacyTokenCleanerLabelsAndDeletes(t *testing.T) {
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	period := 2 * time.Second
	o.LegacyTokenCleaner = LegacyTokenCleanerOptions{CleanUpPeriod: &period, SyncInterval: 200 * time.Millisecond}
	_, admin := startWith(t, o)
	c := kubernetes.NewForConfigOrDie(admin)

	// tracked for long enough: the tracking controller keeps a date
	eventually(t, "the tracking ConfigMap", func() (bool, string) {
		_, err := c.CoreV1().ConfigMaps("kube-system").Patch(t.Context(), "kube-apiserver-legacy-service-account-token-tracking",
			types.MergePatchType, []byte(`{"data":{"since":"2020-01-01"}}`), metav1.PatchOptions{})
		return err == nil, fmt.Sprint(err)
	})
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder", Namespace: "default"},
		Secrets: []corev1.ObjectReference{{Name: "unused"}, {Name: "expired"}}}
	if _, err := c.CoreV1().ServiceAccounts("default").Create(t.Context(), sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, labels := range map[string]map[string]string{"unused": nil, "expired": {"kubernetes.io/legacy-token-invalid-since": "2020-01-02"}} {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels,
			Annotations: map[string]string{corev1.ServiceAccountNameKey: "builder"}}, Type: corev1.SecretTypeServiceAccountToken}
		if _, err := c.CoreV1().Secrets("default").Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the tokens cleaned", func() (bool, string) {
		var state []string
		for _, name := range []string{"unused", "expired"} {
			s, err := c.CoreV1().Secrets("default").Get(t.Context(), name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				state = append(state, name+" gone")
			case err != nil:
				state = append(state, err.Error())
			default:
				state = append(state, name+" invalid since "+s.Labels["kubernetes.io/legacy-token-invalid-since"])
			}
		}
		got, want := strings.Join(state, ", "), "unused invalid since "+time.Now().UTC().Format("2006-01-02")+", expired gone"
		return got == want, fmt.Sprintf("%s, want %s", got, want)
	})
}

// A clean-up period that is not positive stops the server at start, as
// it stops kube-controller-manager, unless the cleaner is off.
func TestLegacyTokenCleanerRefusesNonPositivePeriod(t *testing.T) {
	zero := time.Duration(0)
	for _, list := range [][]string{{"*"}, {"*", "-legacy-serviceaccount-token-cleaner-controller"}} {
		o := DefaultOptions()
		o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		o.Controllers = list
		o.LegacyTokenCleaner.CleanUpPeriod = &zero
		s, err := Start(context.Background(), o)
		if s != nil {
			_ = s.Close()
		}
		if off := len(list) > 1; (err == nil) != off || (err != nil && !strings.Contains(err.Error(), "clean-up-period")) {
			t.Errorf("--controllers=%s with a zero period: Start error %v", strings.Join(list, ","), err)
		}
	}
}
