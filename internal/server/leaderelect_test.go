package server

import (
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"
)

// TestLeaderElectionOptions: the defaults are kube-controller-manager's,
// only a server on etcd is elected, and durations that cannot work are
// refused at start as client-go refuses them.
func TestLeaderElectionOptions(t *testing.T) {
	d := DefaultOptions().LeaderElection
	if !d.Enabled || d.LeaseDuration != 15*time.Second || d.RenewDeadline != 10*time.Second || d.RetryPeriod != 2*time.Second ||
		d.ResourceName != "kube-controller-manager" || d.ResourceNamespace != "kube-system" {
		t.Errorf("DefaultOptions().LeaderElection = %+v, want kube-controller-manager's", d)
	}
	if got := (LeaderElectionOptions{Enabled: true}).withDefaults(); got != d {
		t.Errorf("LeaderElectionOptions{Enabled: true}.withDefaults() = %+v, want %+v", got, d)
	}
	o := DefaultOptions()
	if leaderElected(o) {
		t.Errorf("leaderElected without etcd = true, want false")
	}
	o.Etcd.Servers = []string{"http://127.0.0.1:2379"}
	if !leaderElected(o) {
		t.Errorf("leaderElected with etcd = false, want true")
	}
	o.LeaderElection.Enabled = false
	if leaderElected(o) {
		t.Errorf("leaderElected with --leader-elect=false = true, want false")
	}

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		name    string
		o       LeaderElectionOptions
		wantErr bool
	}{
		{"defaults", DefaultLeaderElectionOptions(), false},
		{"renew deadline not under the lease", LeaderElectionOptions{LeaseDuration: 5 * time.Second, RenewDeadline: 5 * time.Second, RetryPeriod: time.Second}, true},
		{"retry period too long for the renew deadline", LeaderElectionOptions{LeaseDuration: 5 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 2 * time.Second}, true},
	} {
		_, err := newElector(tc.o, http.DefaultTransport, log)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: newElector(%+v) error = %v, want error %v", tc.name, tc.o, err, tc.wantErr)
		}
	}
}
