package server

import (
	"fmt"
	"os"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/admitd/admitd/internal/controllers"
)

// A started server holds its identity lease (named after the host, as
// kube-apiserver's) and the legacy token tracking ConfigMap; a graceful
// shutdown deletes the lease, and without APIServerIdentity a server
// keeps none.
func TestIdentityLeaseAndTokenTracking(t *testing.T) {
	hostname, err := os.Hostname()
	if err != nil {
		t.Skip("no host name:", err)
	}
	id := controllers.APIServerID(hostname)
	o := testOptions(t)
	o.Storage = "bolt"
	s, admin := startWith(t, o)
	c := kubernetes.NewForConfigOrDie(admin)
	eventually(t, "the identity lease", func() (bool, string) {
		lease, err := c.CoordinationV1().Leases("kube-system").Get(t.Context(), id, metav1.GetOptions{})
		return err == nil && lease.Labels[controllers.IdentityLeaseLabel] == "kube-apiserver", fmt.Sprint(err)
	})
	eventually(t, "the legacy token tracking ConfigMap", func() (bool, string) {
		cm, err := c.CoreV1().ConfigMaps("kube-system").Get(t.Context(), controllers.LegacyTokenTrackingConfigMap, metav1.GetOptions{})
		return err == nil && cm.Data["since"] != "", fmt.Sprint(err)
	})
	if err := s.Shutdown(); err != nil {
		t.Fatal(err)
	}
	o.FeatureGates = "APIServerIdentity=false,UnknownVersionInteroperabilityProxy=false,StorageVersionAPI=false"
	_, admin = startWith(t, o)
	c = kubernetes.NewForConfigOrDie(admin)
	if _, err := c.CoordinationV1().Leases("kube-system").Get(t.Context(), id, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the identity lease after a graceful shutdown and a start without APIServerIdentity: err = %v, want NotFound", err)
	}
}
