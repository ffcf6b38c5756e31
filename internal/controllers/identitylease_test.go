package controllers

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
)

// The identity of kube-apiserver on host "vm", as the real kube-apiserver
// 1.37.2 named its lease on this machine (2026-12-01).
func TestAPIServerIDIsUpstreams(t *testing.T) {
	if got, want := APIServerID("vm"), "apiserver-wlv32tlttr4jl3gtroqexyxapa"; got != want {
		t.Errorf("APIServerID(vm) = %s, want %s", got, want)
	}
	if APIServerID("vm2") == APIServerID("vm") {
		t.Error("two hosts share an identity")
	}
}

func (c *cluster) loopback() http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) { return c.api.Loopback(apiserverTestUser).RoundTrip(r) })
}

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

const identityLeasePath = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/"

// The lease controller deletes the lease an earlier run left (another
// holder), creates its own with upstream's labels, annotation and
// duration, renews it, and deletes it when stopped; Run then returns and
// nothing writes the lease again.
func TestIdentityLeaseLifecycle(t *testing.T) {
	c := newCluster(t)
	defer func(d time.Duration) { IdentityLeaseRenewInterval = d }(IdentityLeaseRenewInterval)
	IdentityLeaseRenewInterval = 20 * time.Millisecond
	id := APIServerID("host-a")
	c.must(http.StatusCreated, "POST", identityLeasePath[:len(identityLeasePath)-1],
		`{"metadata":{"name":"`+id+`"},"spec":{"holderIdentity":"earlier-run","leaseDurationSeconds":3600}}`)
	ctl, err := NewIdentityLease(c.loopback(), id, "host-a", "10.0.0.1:6443", discardLog())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctl.Start(ctx)
	if code, _ := c.do("GET", identityLeasePath+id, ""); code != http.StatusNotFound {
		t.Fatalf("the earlier run's lease is still there after Start (%d)", code)
	}
	ran := make(chan struct{})
	go func() { ctl.Run(ctx); close(ran) }()
	var first coordinationv1.Lease
	c.eventually("the lease is created", func() bool { code, _ := c.do("GET", identityLeasePath+id, ""); return code == http.StatusOK })
	c.decode(identityLeasePath+id, &first)
	s := first.Spec
	if s.HolderIdentity == nil || len(*s.HolderIdentity) != len(id)+1+36 || (*s.HolderIdentity)[:len(id)+1] != id+"_" {
		t.Errorf("holderIdentity = %v, want %s_<uuid>", s.HolderIdentity, id)
	}
	if s.LeaseDurationSeconds == nil || *s.LeaseDurationSeconds != 3600 || s.RenewTime == nil {
		t.Errorf("spec = %+v, want a 3600 s lease with a renew time", s)
	}
	if l := first.Labels; l["apiserver.kubernetes.io/identity"] != "kube-apiserver" || l[corev1.LabelHostname] != "host-a" {
		t.Errorf("labels = %v", l)
	}
	if a := first.Annotations["kubernetes.io/peer-advertise-address"]; a != "10.0.0.1:6443" {
		t.Errorf("peer address annotation = %q", a)
	}
	c.eventually("the lease is renewed", func() bool {
		var now coordinationv1.Lease
		c.decode(identityLeasePath+id, &now)
		return now.Spec.RenewTime != nil && now.Spec.RenewTime.After(s.RenewTime.Time) && *now.Spec.HolderIdentity == *s.HolderIdentity
	})
	ctl.Stop(context.Background()) // Run's context still live, as in a graceful shutdown
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("Run goes on after Stop")
	}
	time.Sleep(3 * IdentityLeaseRenewInterval)
	if code, _ := c.do("GET", identityLeasePath+id, ""); code != http.StatusNotFound {
		t.Errorf("the lease is there after Stop and three renew intervals (%d)", code)
	}
}

// The collector deletes the identity leases that expired or lack a renew
// time or duration, and keeps live ones and leases without the identity
// label.
func TestIdentityLeaseGC(t *testing.T) {
	c := newCluster(t)
	now := time.Now().UTC()
	old := now.Add(-2 * time.Hour).Format("2006-01-02T15:04:05.000000Z")
	recent := now.Add(-time.Minute).Format("2006-01-02T15:04:05.000000Z")
	identity := `"labels":{"apiserver.kubernetes.io/identity":"kube-apiserver"}`
	for name, lease := range map[string]string{
		"expired":       `{"metadata":{"name":"expired",` + identity + `},"spec":{"leaseDurationSeconds":3600,"renewTime":"` + old + `"}}`,
		"no-renew-time": `{"metadata":{"name":"no-renew-time",` + identity + `},"spec":{"leaseDurationSeconds":3600}}`,
		"live":          `{"metadata":{"name":"live",` + identity + `},"spec":{"leaseDurationSeconds":3600,"renewTime":"` + recent + `"}}`,
		"not-identity":  `{"metadata":{"name":"not-identity"},"spec":{"leaseDurationSeconds":3600,"renewTime":"` + old + `"}}`,
	} {
		if m := c.must(http.StatusCreated, "POST", identityLeasePath[:len(identityLeasePath)-1], lease); m.Name != name {
			t.Fatalf("created %q, want %q", m.Name, name)
		}
	}
	gc, err := NewIdentityLeaseGC(c.loopback(), discardLog())
	if err != nil {
		t.Fatal(err)
	}
	if err := gc.Collect(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"expired": 404, "no-renew-time": 404, "live": 200, "not-identity": 200} {
		if code, _ := c.do("GET", identityLeasePath+name, ""); code != want {
			t.Errorf("lease %s: GET = %d, want %d", name, code, want)
		}
	}
}

const trackingPath = "/api/v1/namespaces/kube-system/configmaps/" + LegacyTokenTrackingConfigMap

// The tracking ConfigMap is created with the day (UTC); deleted, it is
// created again no sooner than 30 minutes after; one whose date does not
// parse gets today's; a valid one is left alone.
func TestLegacyTokenTracking(t *testing.T) {
	c := newCluster(t)
	ctl, err := NewLegacyTokenTracking(c.store, c.loopback(), discardLog())
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 12, 1, 23, 30, 0, 0, time.FixedZone("east", 3600*5))
	at := func(d time.Duration) {
		ctl.now = func() time.Time { return day.Add(d) }
		if err := ctl.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	since := func() string {
		var cm corev1.ConfigMap
		c.decode(trackingPath, &cm)
		return cm.Data["since"]
	}
	at(0)
	if got := since(); got != "2026-12-01" { // 18:30 UTC
		t.Errorf("since = %q, want the day in UTC", got)
	}
	c.must(http.StatusOK, "DELETE", trackingPath, "")
	at(time.Minute)
	if code, _ := c.do("GET", trackingPath, ""); code != http.StatusNotFound {
		t.Errorf("created again within 30 minutes of the first creation (%d)", code)
	}
	at(31 * time.Minute)
	if code, _ := c.do("GET", trackingPath, ""); code != http.StatusOK {
		t.Errorf("not created again after 30 minutes (%d)", code)
	}
	c.must(http.StatusOK, "PUT", trackingPath, `{"metadata":{"name":"`+LegacyTokenTrackingConfigMap+`"},"data":{"since":"yesterday"}}`)
	at(24 * time.Hour)
	if got := since(); got != "2026-12-02" {
		t.Errorf("since after an invalid date = %q, want today", got)
	}
	at(48 * time.Hour)
	if got := since(); got != "2026-12-02" {
		t.Errorf("a valid date was rewritten: %q", got)
	}
}
