package aggregation

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// startEtcd starts an etcd member in the test process for the sample
// server's storage and returns its client URL.
func startEtcd(t *testing.T) string {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir = "wardle", filepath.Join(t.TempDir(), "etcd")
	cfg.Logger, cfg.LogLevel, cfg.LogOutputs = "zap", "fatal", []string{"stderr"}
	client, peer := freeURL(t, "127.0.0.1"), freeURL(t, "127.0.0.1")
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = "wardle=" + peer.String()
	cfg.TickMs, cfg.ElectionMs = 20, 200
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("starting etcd: %v", err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		t.Fatal("etcd not ready within 30s")
	}
	return client.String()
}

func freeURL(t *testing.T, ip string) url.URL {
	return url.URL{Scheme: "http", Host: freeAddr(t, ip)}
}

// freeAddr is a free port on ip, as host:port.
func freeAddr(t *testing.T, ip string) string {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatalf("listening on %s: %v", ip, err)
	}
	defer l.Close()
	return l.Addr().String()
}

// process is a program the test started, stopped when the test ends.
type process struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	output bytes.Buffer
	done   chan struct{}
}

func (p *process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.output.Write(b)
}

// log is what the process printed so far.
func (p *process) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.output.String()
}

func start(t *testing.T, name string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(name, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(p.stop)
	return p
}

// stop ends the process (SIGTERM, then SIGKILL after ten seconds).
func (p *process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

var servingLine = regexp.MustCompile(`serving on (https://\S+?);? export KUBECONFIG=(\S+)`)

// startAdmitd runs `admitd serve` in dataDir with args and returns its
// admin kubeconfig once it serves.
func startAdmitd(t *testing.T, dataDir string, args ...string) (*process, string) {
	t.Helper()
	p := start(t, binaries.admitd, append([]string{"serve", "--secure-port", "0", "--data-dir", dataDir}, args...)...)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		sc := bufio.NewScanner(strings.NewReader(p.log()))
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				return p, m[2]
			}
		}
		select {
		case <-p.done:
			t.Fatalf("admitd exited: %s", p.log())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("admitd did not start: %s", p.log())
	return nil, ""
}

// waitHealthy waits until GET https://addr/healthz answers 200 (the
// sample server's certificate is not checked here).
func waitHealthy(t *testing.T, p *process, addr string) {
	t.Helper()
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := client.Get("https://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited: %s", p.cmd.Path, p.log())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("%s not healthy within 60s: %s", p.cmd.Path, p.log())
}

// kubectl runs kubectl with kubeconfig, with a HOME of its own (no cached
// discovery), and returns stdout and stderr.
func kubectl(t *testing.T, kubeconfig, stdin string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlBinary(t), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// mustKubectl is kubectl that fails the test on error.
func mustKubectl(t *testing.T, kubeconfig, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := kubectl(t, kubeconfig, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// waitFor polls cond for up to a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// hasLine reports whether some line of out has exactly these fields.
func hasLine(out string, fields ...string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.Join(strings.Fields(l), " ") == strings.Join(fields, " ") {
			return true
		}
	}
	return false
}
