package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runRoot executes the root command with args and returns its output.
func runRoot(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := NewRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestCertsCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	out, err := runRoot(t, "certs", "--out", dir, "--hosts", "hook.tools.svc,127.0.0.1")
	if err != nil {
		t.Fatalf("admitd certs error = %v", err)
	}
	for _, name := range []string{"ca.key", "ca.crt", "tls.key", "tls.crt"} {
		if !strings.Contains(out, "wrote "+filepath.Join(dir, name)+"\n") {
			t.Errorf("admitd certs output %q does not report %s", out, name)
		}
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("admitd certs did not write %s: %v", name, err)
		}
	}
	ca, _ := os.ReadFile(filepath.Join(dir, "ca.crt"))

	out, err = runRoot(t, "certs", "--out", dir, "--hosts", "hook.tools.svc")
	if err != nil {
		t.Fatalf("second admitd certs error = %v", err)
	}
	if !strings.HasPrefix(out, "reused the CA in "+filepath.Join(dir, "ca.crt")) || strings.Contains(out, "ca.key") {
		t.Errorf("second admitd certs output = %q, want the CA reused and only tls.* written", out)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "ca.crt")); !bytes.Equal(again, ca) {
		t.Errorf("second admitd certs replaced ca.crt, want it reused")
	}
}

func TestCertsCommandErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"certs", "--hosts", "a.svc"}, `required flag(s) "out" not set`},
		{[]string{"certs", "--out", dir}, `required flag(s) "hosts" not set`},
		{[]string{"certs", "--out", dir, "--hosts", "Bad_Host"}, `host "Bad_Host" is neither an IP address nor a DNS name`},
		{[]string{"certs", "--out", dir, "--hosts", "a.svc", "extra"}, `unknown command "extra"`},
	} {
		if _, err := runRoot(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("admitd %s error = %v, want one containing %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

func TestCertsHelpShowsAnExample(t *testing.T) {
	out, err := runRoot(t, "certs", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Examples:", "admitd certs --out ./certs --hosts hook.tools.svc", "admitd.io/inject-ca-from"} {
		if !strings.Contains(out, want) {
			t.Errorf("admitd certs --help does not contain %q:\n%s", want, out)
		}
	}
}
