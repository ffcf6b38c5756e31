package bolt_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/admitd/admitd/internal/storage/bolt"
	"github.com/admitd/admitd/pkg/storage"
)

// crashEnv tells the test binary, re-run as a child, to act as the writer
// that TestCrashKeepsAcknowledgedWrites kills.
const crashEnv = "ADMITD_BOLT_CRASH_CHILD"

// TestCrashChild is not a test of its own: it is the child process of
// TestCrashKeepsAcknowledgedWrites. It creates keys from 8 goroutines and
// prints "ACK <key> <revision>" for each acknowledged create, until killed.
func TestCrashChild(t *testing.T) {
	spec := os.Getenv(crashEnv)
	if spec == "" {
		t.Skip("only runs as the child of TestCrashKeepsAcknowledgedWrites")
	}
	path, round, _ := strings.Cut(spec, "|")
	s, err := bolt.Open(path, crashOptions(round))
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	for w := range 8 {
		go func() {
			for i := 0; ; i++ {
				key := fmt.Sprintf("/crash/%s/%d/%d", round, w, i)
				kv, err := s.Create(context.Background(), key, []byte(key))
				if err != nil {
					fmt.Fprintln(os.Stderr, "create:", err)
					os.Exit(2)
				}
				mu.Lock()
				fmt.Fprintf(os.Stdout, "ACK %s %d\n", key, kv.ModRevision) // one write(2)
				mu.Unlock()
			}
		}()
	}
	select {}
}

// TestCrashKeepsAcknowledgedWrites kills a writing process with SIGKILL,
// several times over the same file, and checks after each crash that every
// write acknowledged before the kill is there, at its revision.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	path := filepath.Join(t.TempDir(), "admitd.db")
	acked := make(map[string]int64)
	for round := range 3 {
		crashWriter(t, path, round, 300+200*round, acked)

		s, err := bolt.Open(path, bolt.Options{})
		if err != nil {
			t.Fatalf("round %d: Open after kill -9 error = %v", round, err)
		}
		checkAcked(t, s, round, acked)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// crashOptions varies the checkpoints by round: the default; none at all,
// so that every acknowledged write is recovered from the write-ahead log;
// and one after every few writes, so that kills land in checkpoints too.
func crashOptions(round string) bolt.Options {
	switch round {
	case "1":
		return bolt.Options{CheckpointInterval: time.Hour, CheckpointEvents: 1 << 30}
	case "2":
		return bolt.Options{CheckpointEvents: 5}
	}
	return bolt.Options{}
}

// crashWriter runs the child until it has acknowledged at least n writes,
// kills it, and adds every write it acknowledged to acked.
func crashWriter(t *testing.T, path string, round, n int, acked map[string]int64) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d", crashEnv, path, round))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	got := 0
	killed := false
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF {
			break // a line cut short by the kill was never acknowledged
		}
		if err != nil {
			t.Fatalf("round %d: reading the child: %v", round, err)
		}
		if key, rev, ok := parseAck(line); ok {
			acked[key] = rev
			got++
		}
		if got >= n && !killed {
			// Kill while the child is writing; what it printed before
			// dying is still read from the pipe.
			if err := syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if !killed || err == nil {
		t.Fatalf("round %d: child exited before the kill: %v; stderr:\n%s", round, err, stderr.String())
	}
	t.Logf("round %d: killed the writer after %d acknowledged creates", round, got)
}

func parseAck(line string) (key string, rev int64, ok bool) {
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "ACK" {
		return "", 0, false
	}
	rev, err := strconv.ParseInt(f[2], 10, 64)
	return f[1], rev, err == nil
}

func checkAcked(t *testing.T, s *bolt.Store, round int, acked map[string]int64) {
	t.Helper()
	ctx := t.Context()
	var maxRev int64
	for key, rev := range acked {
		kv, err := s.Get(ctx, key)
		if err != nil || kv.ModRevision != rev || string(kv.Value) != key {
			t.Errorf("round %d: acknowledged %s at revision %d, after kill -9 Get = %+v, %v", round, key, rev, kv, err)
		}
		maxRev = max(maxRev, rev)
	}
	rev, err := s.Revision(ctx)
	if err != nil || rev < maxRev {
		t.Errorf("round %d: Revision() after kill -9 = %d, %v; want at least %d", round, rev, err, maxRev)
	}
	all, err := s.List(ctx, "", storage.ListOptions{})
	if err != nil || int64(len(all.Items)) != rev {
		t.Errorf("round %d: %d keys after kill -9 at revision %d, %v; want one key per revision (creates only)", round, len(all.Items), rev, err)
	}
}
