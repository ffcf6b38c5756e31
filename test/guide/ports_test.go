package guide

import (
	"regexp"
	"strings"
	"testing"
)

// A page shows the ports a reader uses on 127.0.0.1: 6443 for the server
// (or the --secure-port of its server block), 8443 for WEBHOOK_PORT, 2379
// and 2380 for an etcd it starts. The test runs on free ports instead, so
// that pages running at once, or other servers on the machine, never
// collide: ports maps each page port to the machine's and back. In a
// command or a server's flags, 127.0.0.1:<page port> becomes the
// machine's port; in what they print, the other way round.
type ports struct {
	toMachine, toPage map[string]string
}

// etcdPagePorts are the etcd client and peer ports a page starts an etcd
// on; each gets a free port of its own.
var etcdPagePorts = []string{"2379", "2380"}

// defaultPagePort is the port of a server block without --secure-port.
const defaultPagePort = "6443"

func newPorts() *ports {
	return &ports{toMachine: map[string]string{}, toPage: map[string]string{}}
}

func (p *ports) add(page, machine string) {
	p.toMachine[page], p.toPage[machine] = machine, page
}

var loopbackPort = regexp.MustCompile(`127\.0\.0\.1:(\d+)\b`)

// machine rewrites the page's ports in text to the machine's.
func (p *ports) machine(text string) string { return rewritePorts(text, p.toMachine) }

// page rewrites the machine's ports in text to the page's.
func (p *ports) page(text string) string { return rewritePorts(text, p.toPage) }

func rewritePorts(text string, table map[string]string) string {
	return loopbackPort.ReplaceAllStringFunc(text, func(hostPort string) string {
		if to, ok := table[strings.TrimPrefix(hostPort, "127.0.0.1:")]; ok {
			return "127.0.0.1:" + to
		}
		return hostPort
	})
}

// securePort is the port a server block's flags name (the last
// --secure-port), the page's port of that server.
func securePort(args []string) string {
	port := defaultPagePort
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "--secure-port="):
			port = strings.TrimPrefix(a, "--secure-port=")
		case a == "--secure-port" && i+1 < len(args):
			port = args[i+1]
		}
	}
	return port
}

// TestPortsBothWays checks that a page's ports become the machine's in a
// command and come back in its output, whole ports only, and that a server
// block's page port is its last --secure-port.
func TestPortsBothWays(t *testing.T) {
	p := newPorts()
	p.add("2379", "41234")
	p.add("6444", "45678")
	cmd := "etcd --listen-client-urls http://127.0.0.1:2379 --x http://127.0.0.1:23790 http://10.0.0.1:2379"
	want := "etcd --listen-client-urls http://127.0.0.1:41234 --x http://127.0.0.1:23790 http://10.0.0.1:2379"
	if got := p.machine(cmd); got != want {
		t.Errorf("machine(%q) = %q, want %q", cmd, got, want)
	}
	out := "serving on https://127.0.0.1:45678; 127.0.0.1:456789 127.0.0.1:41234/health"
	wantOut := "serving on https://127.0.0.1:6444; 127.0.0.1:456789 127.0.0.1:2379/health"
	if got := p.page(out); got != wantOut {
		t.Errorf("page(%q) = %q, want %q", out, got, wantOut)
	}
	for args, want := range map[string]string{
		"":                                      "6443",
		"--data-dir b --secure-port 6444":       "6444",
		"--secure-port=7000 --secure-port 7001": "7001",
	} {
		if got := securePort(strings.Fields(args)); got != want {
			t.Errorf("securePort(%q) = %s, want %s", args, got, want)
		}
	}
}
