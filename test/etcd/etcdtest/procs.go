package etcdtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// memberEnv carries the memberSpec of a child process started by
// StartProcesses.
const memberEnv = "ADMITD_ETCDTEST_MEMBER"

// memberSpec is what a child process needs to run one member.
type memberSpec struct {
	Name, Dir, ClientURL, PeerURL, Initial, State string
}

// RunMemberIfChild makes the test binary an etcd member when StartProcesses
// started it as one: call it first in TestMain. A member runs until it is
// killed and never returns; in the test process itself it returns at once.
func RunMemberIfChild() {
	raw := os.Getenv(memberEnv)
	if raw == "" {
		return
	}
	var m memberSpec
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		fmt.Fprintln(os.Stderr, "etcd member:", err)
		os.Exit(2)
	}
	e, err := embed.StartEtcd(memberConfig(m.Name, m.Dir, m.ClientURL, m.PeerURL, m.Initial, m.State))
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcd member:", err)
		os.Exit(1)
	}
	err = <-e.Err()
	fmt.Fprintln(os.Stderr, "etcd member stopped:", err)
	os.Exit(1)
}

// Process is one etcd member running as a child process of the test, so
// that it can be killed with SIGKILL.
type Process struct {
	Name, ClientURL string
	spec            memberSpec
	cmd             *exec.Cmd
	exited          chan struct{}
}

// Processes is a cluster of members in child processes.
type Processes struct {
	t       testing.TB
	Members []*Process
}

// StartProcesses starts an n-member cluster, each member a child process
// running this test binary (whose TestMain calls RunMemberIfChild), and
// kills them when t ends. It returns once every member reports healthy.
func StartProcesses(t testing.TB, n int) *Processes {
	t.Helper()
	c := &Processes{t: t}
	dir := t.TempDir()
	var peers []string
	for i := range n {
		name := fmt.Sprintf("p%d", i)
		m := &Process{Name: name, ClientURL: freeURL(t),
			spec: memberSpec{Name: name, Dir: filepath.Join(dir, name), PeerURL: freeURL(t), State: "new"}}
		m.spec.ClientURL = m.ClientURL
		c.Members = append(c.Members, m)
		peers = append(peers, name+"="+m.spec.PeerURL)
	}
	for _, m := range c.Members {
		m.spec.Initial = strings.Join(peers, ",")
		c.start(m)
	}
	t.Cleanup(func() {
		for _, m := range c.Members {
			m.Kill()
		}
	})
	for _, m := range c.Members {
		c.waitHealthy(m)
	}
	return c
}

// Endpoints are the client URLs of every member.
func (c *Processes) Endpoints() []string {
	var eps []string
	for _, m := range c.Members {
		eps = append(eps, m.ClientURL)
	}
	return eps
}

func (c *Processes) start(m *Process) {
	c.t.Helper()
	spec, err := json.Marshal(m.spec)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), memberEnv+"="+string(spec))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("starting etcd member %s: %v", m.Name, err)
	}
	m.cmd, m.exited = cmd, make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(m.exited)
	}()
}

// waitHealthy waits until m answers /health with a leader.
func (c *Processes) waitHealthy(m *Process) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, m.ClientURL+"/health", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			c.t.Fatalf("etcd member %s not healthy within 30s (last: %v)", m.Name, err)
		case <-m.exited:
			c.t.Fatalf("etcd member %s exited", m.Name)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Kill sends SIGKILL to the member and waits for it to exit; its data
// stays, for Restart.
func (m *Process) Kill() {
	if m.cmd == nil {
		return
	}
	_ = m.cmd.Process.Kill()
	<-m.exited
	m.cmd = nil
}

// Pause stops the member (SIGSTOP) without killing it: it answers
// nothing until Resume, as an etcd that hangs.
func (m *Process) Pause() { _ = m.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused member (SIGCONT).
func (m *Process) Resume() { _ = m.cmd.Process.Signal(syscall.SIGCONT) }

// Restart starts a killed member again from its data directory and waits
// until it is healthy.
func (c *Processes) Restart(m *Process) {
	c.t.Helper()
	m.spec.State = "existing"
	c.start(m)
	c.waitHealthy(m)
}

// Leader is the running member that leads the cluster, asked of each
// member's status, or nil.
func (c *Processes) Leader(ctx context.Context) *Process {
	for _, m := range c.Members {
		if m.cmd == nil {
			continue
		}
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.ClientURL}, DialTimeout: 2 * time.Second,
			Logger: zap.NewNop()})
		if err != nil {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		st, err := cli.Status(sctx, m.ClientURL)
		cancel()
		cli.Close()
		if err == nil && st.Leader == st.Header.MemberId {
			return m
		}
	}
	return nil
}
