// Package etcdtest starts real etcd members in-process, on loopback ports,
// for the tests of admitd's etcd backend.
package etcdtest

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// Member is one etcd server of a Cluster.
type Member struct {
	Name      string
	ClientURL string
	peerURL   string
	dir       string
	etcd      *embed.Etcd
}

// Cluster is a set of members started together.
type Cluster struct {
	t       testing.TB
	Members []*Member
	initial string
}

// Start starts an n-member cluster in t's temporary directory and stops it
// when t ends.
func Start(t testing.TB, n int) *Cluster {
	t.Helper()
	c := &Cluster{t: t}
	dir := t.TempDir()
	var peers []string
	for i := range n {
		m := &Member{Name: fmt.Sprintf("m%d", i), ClientURL: freeURL(t), peerURL: freeURL(t),
			dir: filepath.Join(dir, fmt.Sprintf("m%d", i))}
		c.Members = append(c.Members, m)
		peers = append(peers, m.Name+"="+m.peerURL)
	}
	c.initial = strings.Join(peers, ",")
	errs := make(chan error, n)
	for _, m := range c.Members {
		go func() { errs <- c.start(m, "new") }()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("starting etcd: %v", err)
		}
	}
	t.Cleanup(func() {
		for _, m := range c.Members {
			m.Stop()
		}
	})
	return c
}

// Endpoints are the client URLs of every member.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.Members {
		eps = append(eps, m.ClientURL)
	}
	return eps
}

func (c *Cluster) start(m *Member, state string) error {
	cfg := memberConfig(m.Name, m.dir, m.ClientURL, m.peerURL, c.initial, state)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return err
	case <-time.After(30 * time.Second):
		e.Close()
		return fmt.Errorf("member %s not ready within 30s", m.Name)
	}
	m.etcd = e
	return nil
}

// Stop closes the member (its data stays, for Restart).
func (m *Member) Stop() {
	if m.etcd != nil {
		m.etcd.Close()
		m.etcd = nil
	}
}

// Restart starts a stopped member again from its data directory. It
// returns once the member has started; it is ready when it has rejoined
// a quorum.
func (c *Cluster) Restart(m *Member) {
	c.t.Helper()
	if err := c.start(m, "existing"); err != nil {
		c.t.Fatalf("restarting %s: %v", m.Name, err)
	}
}

// memberConfig is the configuration of the member name, with its data in
// dir, of the cluster initial ("name=peerURL,...") in state "new" or
// "existing": fast elections on loopback, quiet logs.
func memberConfig(name, dir, clientURL, peerURL, initial, state string) *embed.Config {
	cfg := embed.NewConfig()
	cfg.Name = name
	cfg.Dir = dir
	cfg.Logger, cfg.LogLevel = "zap", "fatal" // shutdown and compaction noise is logged at error level
	cfg.LogOutputs = []string{"stderr"}
	curl, purl := mustParse(clientURL), mustParse(peerURL)
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{curl}, []url.URL{curl}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{purl}, []url.URL{purl}
	cfg.InitialCluster, cfg.ClusterState = initial, state
	cfg.InitialClusterToken = "admitd-test"
	cfg.TickMs, cfg.ElectionMs = 20, 200
	cfg.WatchProgressNotifyInterval = 200 * time.Millisecond
	return cfg
}

func freeURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return "http://" + l.Addr().String()
}

func mustParse(s string) url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return *u
}

// Leader is the running member that leads the cluster, or nil.
func (c *Cluster) Leader() *Member {
	for _, m := range c.Members {
		if m.etcd != nil && m.etcd.Server.Leader() == m.etcd.Server.MemberID() {
			return m
		}
	}
	return nil
}

// WaitLeader waits until a running member leads.
func (c *Cluster) WaitLeader() *Member {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := c.Leader(); m != nil {
			return m
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatalf("no etcd leader within 30s")
	return nil
}
