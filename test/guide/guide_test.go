package guide

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/admitd/admitd/test/e2e/harness"
)

var update = flag.Bool("update", false, "rewrite the output the pages show with what the commands print")

func TestMain(m *testing.M) { harness.Main(m) }

// pages are the files whose console sessions are checked.
func pages(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../docs/guide/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append(files, "../../README.md")
}

// TestPages runs the console sessions of every page, each page on fresh
// `admitd serve`s of its own, and compares what each command prints with
// the output the page shows after it.
func TestPages(t *testing.T) {
	for _, path := range pages(t) {
		name := strings.TrimPrefix(filepath.ToSlash(path), "../../")
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			t.Parallel()
			p, err := readPage(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.blocks) == 0 {
				t.Skip("no console blocks")
			}
			if p.slow && os.Getenv("ADMITD_GUIDE_SLOW") != "1" {
				t.Skip("a slow page (" + slowMark + "): ADMITD_GUIDE_SLOW=1 runs it, as .ci/run does")
			}
			got := runPage(t, p)
			if *update {
				if err := os.WriteFile(path, []byte(p.update(got)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// runPage runs a page's sessions and returns what each command printed, as
// a reader would see it, by the line of its `$ `. Each server block starts
// its server where it comes; a page without one gets `admitd serve` before
// its first session.
func runPage(t *testing.T, p *page) map[int]string {
	s := newSession(t)
	if !p.hasServer() {
		s.startServer(t, nil)
	}
	got := map[int]string{}
	for _, b := range p.blocks {
		for _, c := range b.commands {
			var out string
			if b.server {
				out = s.startServer(t, b.serveArgs())
			} else {
				out = s.run(t, c.text)
			}
			out = reader(out, s)
			got[c.line] = out
			if !*update && comparable(out) != comparable(c.want) {
				t.Errorf("%s:%d: $ %s\nprints what the page does not show (- page, + printed):\n%s", p.path, c.line, c.text,
					harness.LineDiff(comparable(c.want), comparable(out)))
			}
		}
	}
	return got
}

// newSession makes a page's directories: a HOME of its own holding the demo
// working directory and, as ~/admitd, the repository (the clone a reader
// has), and a bin directory with admitd and kubectl.
func newSession(t *testing.T) *session {
	tmp := t.TempDir()
	s := &session{home: filepath.Join(tmp, "home"), stateDir: filepath.Join(tmp, "state"), webhookPort: freePort(t),
		ports: newPorts()}
	s.ports.add(pageWebhookPort, s.webhookPort)
	for _, port := range etcdPagePorts {
		s.ports.add(port, freePort(t))
	}
	s.workDir = filepath.Join(s.home, "demo")
	bin := filepath.Join(tmp, "bin")
	for _, dir := range []string{s.workDir, s.stateDir, bin} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		filepath.Join(bin, "admitd"):    harness.Bin,
		filepath.Join(bin, "kubectl"):   harness.KubectlBinary(t),
		filepath.Join(s.home, "admitd"): repo,
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	s.env = sessionEnv(t, s, bin)
	// Registered before any server starts, so run after the servers'
	// cleanups: a server stops while the etcd a command started still
	// serves it.
	t.Cleanup(func() {
		for _, pgid := range s.groups {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	})
	if err := os.WriteFile(filepath.Join(s.stateDir, "cwd"), []byte(s.workDir), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

// freePort is a port nothing listens on now.
func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// sessionEnv is the environment of the commands: the test's, without a
// KUBECONFIG, with the session's HOME (but the test's Go module and build
// caches, so that what a page builds comes from them), admitd and kubectl
// first on PATH, and WEBHOOK_PORT a free port.
func sessionEnv(t *testing.T, s *session, bin string) []string {
	goEnv, err := exec.Command("go", "env", "GOPATH", "GOMODCACHE", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	caches := strings.Split(strings.TrimRight(string(goEnv), "\n"), "\n")
	if len(caches) != 3 {
		t.Fatalf("go env printed %q", goEnv)
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "KUBECONFIG", "HOME", "PATH", "PWD", "OLDPWD", "CDPATH", "ENV", "BASH_ENV", "WEBHOOK_PORT",
			"GOPATH", "GOMODCACHE", "GOCACHE":
			continue
		}
		env = append(env, kv)
	}
	path := strings.Join([]string{bin, os.Getenv("PATH"), "/usr/local/bin", "/usr/bin", "/bin"}, string(os.PathListSeparator))
	return append(env, "HOME="+s.home, "PATH="+path, "WEBHOOK_PORT="+s.webhookPort,
		"GOPATH="+caches[0], "GOMODCACHE="+caches[1], "GOCACHE="+caches[2])
}

// A session runs a page's commands one at a time, each in a new sh that
// starts with the exported variables and working directory the command
// before it left.
type session struct {
	home, workDir, stateDir string
	env                     []string
	webhookPort             string
	ports                   *ports
	// groups are the process groups of the commands run, killed when the
	// page is done, after its servers have stopped.
	groups []int
}

var servingPort = regexp.MustCompile(`serving on https://127\.0\.0\.1:(\d+)`)

// startServer runs `admitd serve args... --secure-port 0` in the working
// directory, as a reader runs it there, with the page's ports in args
// rewritten to the machine's, and returns the line it printed when it
// began serving. Its port stands for the --secure-port of args (6443 when
// they have none) in what the commands print.
func (s *session) startServer(t *testing.T, args []string) string {
	t.Helper()
	serveArgs := []string{"serve"}
	for _, a := range args {
		serveArgs = append(serveArgs, s.ports.machine(a))
	}
	cmd := exec.Command(harness.Bin, append(serveArgs, "--secure-port", "0")...)
	cmd.Dir, cmd.Env = s.workDir, s.env
	stderr := &harness.Output{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			first <- sc.Text()
		}
		close(first)
		for sc.Scan() {
		}
	}()
	select {
	case line := <-first:
		m := servingPort.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("admitd serve printed %q, not its serving line; stderr:\n%s", line, stderr.String())
		}
		s.ports.add(securePort(args), m[1])
		return line
	case <-time.After(60 * time.Second):
		t.Fatalf("admitd serve did not start within a minute; stderr:\n%s", stderr.String())
	}
	return ""
}

// commandTimeout bounds each command of a session. A page's first
// `go test` builds its module's test binary (testenv and client-go) from
// what the build cache lacks: over two minutes on a cold cache on 2 busy
// cores.
const commandTimeout = 6 * time.Minute

// sessionScript runs the command in cmd.sh in the state the commands before
// it left, and saves the state it leaves.
const sessionScript = `if [ -f "$1/env" ]; then . "$1/env"; fi
cd "$(cat "$1/cwd")" || exit
. "$1/cmd.sh"
guide_status=$?
pwd > "$1/cwd"
export -p > "$1/env"
exit $guide_status
`

// run runs one command and returns what it printed on stdout and stderr,
// interleaved as on a terminal. Its exit status is not checked: a page
// that means to show it prints it (`echo $?`).
func (s *session) run(t *testing.T, text string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(s.stateDir, "cmd.sh"), []byte(s.ports.machine(text)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", sessionScript, "sh", s.stateDir)
	cmd.Path = shell(t)
	cmd.Env = s.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &harness.Output{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// What the command left in the background (a webhook server, an
	// etcd) runs until the page is done.
	s.groups = append(s.groups, cmd.Process.Pid)
	_ = cmd.Wait()
	if ctx.Err() != nil {
		t.Errorf("$ %s\ndid not finish within %v; it printed:\n%s", text, commandTimeout, out.String())
	}
	return out.String()
}

// shell is sh from PATH, else /bin/sh (the fresh-machine run of CI keeps
// only go and sh on PATH).
func shell(t *testing.T) string {
	if p, err := exec.LookPath("sh"); err == nil {
		return p
	}
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip(fmt.Sprintf("no sh to run the sessions: %v", err))
	}
	return "/bin/sh"
}
