package etcd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/admitd/admitd/internal/cli"
	"github.com/admitd/admitd/test/etcd/etcdtest"
)

// serveEnv carries the `admitd serve` arguments of a child process
// started by startInstance.
const serveEnv = "ADMITD_ETCDTEST_SERVE"

func TestMain(m *testing.M) {
	etcdtest.RunMemberIfChild()
	runAdmitdIfChild()
	// in-process servers log unhandled errors through klog when they stop
	klog.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

// runAdmitdIfChild makes the test binary `admitd serve` (the command
// cmd/admitd runs) when startInstance started it as one; it never returns
// then.
func runAdmitdIfChild() {
	raw := os.Getenv(serveEnv)
	if raw == "" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		fmt.Fprintln(os.Stderr, "admitd child:", err)
		os.Exit(2)
	}
	cmd := cli.NewRootCommand()
	cmd.SetArgs(append([]string{"serve"}, args...))
	if err := cmd.Execute(); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// instance is one admitd serving in a child process.
type instance struct {
	name    string
	dataDir string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	config  *rest.Config
	client  kubernetes.Interface
	// kubeconfig is the admin kubeconfig the instance wrote.
	kubeconfig string
}

// startInstance starts `admitd serve` over the etcd endpoints in a child
// process, with its certificates and service-account keys copied from
// shareFrom's data directory when it is not nil (instances of one cluster
// share them, as kube-apiservers behind one load balancer do), and waits
// until it is ready. It is killed when t ends.
func startInstance(t *testing.T, name string, endpoints []string, shareFrom *instance, extra ...string) *instance {
	t.Helper()
	dir := t.TempDir()
	in := &instance{name: name, dataDir: filepath.Join(dir, "data"), logPath: filepath.Join(dir, "admitd.log"),
		kubeconfig: filepath.Join(dir, "admin.kubeconfig"), exited: make(chan struct{})}
	if shareFrom != nil {
		if err := os.CopyFS(filepath.Join(in.dataDir, "pki"), os.DirFS(filepath.Join(shareFrom.dataDir, "pki"))); err != nil {
			t.Fatalf("sharing certificates: %v", err)
		}
	}
	args := append([]string{"--etcd-servers=" + strings.Join(endpoints, ","), "--secure-port=0",
		"--data-dir=" + in.dataDir, "--kubeconfig-out=" + in.kubeconfig}, extra...)
	raw, _ := json.Marshal(args)
	logFile, err := os.Create(in.logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	in.cmd = exec.Command(os.Args[0], "-test.run=^$")
	in.cmd.Env = append(os.Environ(), serveEnv+"="+string(raw))
	in.cmd.Stdout, in.cmd.Stderr = logFile, logFile
	in.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := in.cmd.Start(); err != nil {
		t.Fatalf("starting admitd %s: %v", name, err)
	}
	go func() {
		_ = in.cmd.Wait()
		close(in.exited)
	}()
	t.Cleanup(func() {
		in.kill()
		if t.Failed() {
			in.logTail(t)
		}
	})
	in.waitReady(t)
	return in
}

// waitReady waits for the kubeconfig and a 200 from /readyz.
func (in *instance) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-in.exited:
			in.logTail(t)
			t.Fatalf("admitd %s exited while starting", in.name)
		default:
		}
		if in.client == nil {
			if cfg, err := clientcmd.BuildConfigFromFlags("", in.kubeconfig); err == nil {
				cfg.QPS, cfg.Timeout = -1, 15*time.Second
				in.config, in.client = cfg, kubernetes.NewForConfigOrDie(cfg)
			}
		}
		if in.client != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_, err := in.client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
			cancel()
			if err == nil {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	in.logTail(t)
	t.Fatalf("admitd %s not ready within 60s", in.name)
}

// kill sends SIGKILL and waits for the process to exit.
func (in *instance) kill() {
	if in.cmd.Process != nil {
		_ = in.cmd.Process.Kill()
	}
	<-in.exited
}

func (in *instance) logTail(t *testing.T) {
	raw, err := os.ReadFile(in.logPath)
	if err != nil {
		return
	}
	if len(raw) > 4000 {
		raw = raw[len(raw)-4000:]
	}
	t.Logf("admitd %s log (tail):\n%s", in.name, raw)
}

// kubectl runs kubectl against the instance; the test skips without it.
func (in *instance) kubectl(t *testing.T, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not in PATH")
	}
	out, err := exec.Command(path, append([]string{"--kubeconfig=" + in.kubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s on %s: %v\n%s", strings.Join(args, " "), in.name, err, out)
	}
	return string(out)
}

// logContains reports whether the instance logged s.
func (in *instance) logContains(t *testing.T, s string) bool {
	raw, err := os.ReadFile(in.logPath)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(raw), s)
}
