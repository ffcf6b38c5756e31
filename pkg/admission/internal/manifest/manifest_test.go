package manifest

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func write(t *testing.T, dir, name, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "b.yaml", "kind: B\napiVersion: x/v1\n---\n\n---\nkind: C\napiVersion: x/v1\n")
	write(t, dir, "a.json", `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"x/v1","kind":"A1"},{"apiVersion":"x/v1","kind":"A2"}]}`)
	write(t, dir, "empty.yml", "")
	write(t, dir, "notes.txt", "kind: Ignored")
	if err := os.Mkdir(filepath.Join(dir, "sub.yaml"), 0o700); err != nil {
		t.Fatal(err)
	}
	docs, hash, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range docs {
		got = append(got, d.File+":"+d.Kind)
	}
	if want := "a.json:A1 a.json:A2 b.yaml:B b.yaml:C"; strings.Join(got, " ") != want {
		t.Errorf("ReadDir documents = %v, want %s", got, want)
	}
	if !strings.HasPrefix(hash, "sha256:") {
		t.Errorf("hash = %q, want sha256:...", hash)
	}
	if _, empty, _ := ReadDir(t.TempDir()); empty != "" {
		t.Errorf("hash of an empty directory = %q, want empty", empty)
	}
	write(t, dir, "bad.yaml", "kind: [")
	if _, _, err := ReadDir(dir); err == nil || !strings.HasPrefix(err.Error(), "error loading bad.yaml: ") {
		t.Errorf("ReadDir with a malformed file = %v, want an error naming the file", err)
	}
}

func TestNames(t *testing.T) {
	n := Names{}
	cases := []struct{ file, key, name, err string }{
		{"a.yaml", "K", "x.static.k8s.io", ""},
		{"b.yaml", "Other", "x.static.k8s.io", ""},
		{"c.yaml", "K", "x.static.k8s.io", `duplicate name "x.static.k8s.io" found in file "c.yaml" (previously seen in "a.yaml")`},
		{"d.yaml", "K", "plain", `"plain" in file "d.yaml" must have a name ending with ".static.k8s.io"`},
		{"e.yaml", "K", "", `resource in file "e.yaml" must have a name`},
	}
	for _, tc := range cases {
		err := n.Check(tc.file, tc.key, tc.name)
		if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("Check(%s, %s, %q) = %v, want %q", tc.file, tc.key, tc.name, err, tc.err)
		}
	}
}

func TestParsePluginConfig(t *testing.T) {
	if cfg, err := ParsePluginConfig(nil); err != nil || cfg.Kind != "" {
		t.Errorf("ParsePluginConfig(nil) = %+v, %v, want empty", cfg, err)
	}
	dir := t.TempDir()
	cases := []struct{ doc, err string }{
		{"kind: X\nstaticManifestsDir: " + dir + "\n", ""},
		{"apiVersion: v1\n", "'Kind' is missing"},
		{"kind: X\nstaticManifestsDir: rel\n", `staticManifestsDir: Invalid value: "rel": must be an absolute file path`},
		{"kind: X\nstaticManifestsDir: /does/not/exist\n", "unable to read"},
		{"kind: X\nextra: 1\n", `unknown field "extra"`},
	}
	for _, tc := range cases {
		_, err := ParsePluginConfig(strings.NewReader(tc.doc))
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParsePluginConfig(%q) = %v, want %q", tc.doc, err, tc.err)
		}
	}
}

func TestReloaderKeepsLastGoodLoad(t *testing.T) {
	var calls atomic.Int64 // loads run in the background
	load := func() (Loaded[int], error) {
		switch calls.Add(1) {
		case 1:
			return Loaded[int]{Hash: "h1", Value: 1}, nil
		case 2:
			return Loaded[int]{}, errors.New("broken file")
		}
		return Loaded[int]{Hash: "h3", Value: 3}, nil
	}
	var mu sync.Mutex
	var outcomes []string
	observe := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		outcomes = append(outcomes, fmt.Sprint(err))
	}
	r, err := NewReloader(load, slog.New(slog.NewTextHandler(io.Discard, nil)), "test", observe)
	if err != nil {
		t.Fatal(err)
	}
	want := func(v int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			r.mu.Lock()
			r.checked = time.Time{} // due at once
			r.mu.Unlock()
			if r.Get().Value == v {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("reloader value never became %d", v)
	}
	want(3) // the failed second load kept 1, the third load replaced it
	if n := calls.Load(); n < 3 {
		t.Errorf("loads = %d, want at least 3", n)
	}
	// The initial load and the changing reload succeed, the broken one
	// fails; later loads of the unchanged h3 report nothing.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		got := strings.Join(outcomes, ",")
		mu.Unlock()
		if got == "<nil>,broken file,<nil>" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("observed loads = %q, want <nil>,broken file,<nil>", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWatchReloadsOnFileChanges: a file written into the directory is
// loaded well before the periodic recheck would notice it.
func TestWatchReloadsOnFileChanges(t *testing.T) {
	dir := t.TempDir()
	load := func() (Loaded[string], error) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return Loaded[string]{}, err
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		h := strings.Join(names, ",")
		return Loaded[string]{Hash: h, Value: h}, nil
	}
	r, err := NewReloader(load, slog.New(slog.NewTextHandler(io.Discard, nil)), "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Watch(t.Context(), dir)
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(Recheck / 2) // Get's own recheck is not due yet
	for r.current.Load().Value != "a.yaml" {
		if time.Now().After(deadline) {
			t.Fatalf("value = %q %s after writing a.yaml, want a.yaml", r.current.Load().Value, Recheck/2)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A subdirectory's files count too (ConfigMap volumes).
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	waitValue(t, r, "a.yaml,sub")
	if err := os.Remove(filepath.Join(dir, "a.yaml")); err != nil {
		t.Fatal(err)
	}
	waitValue(t, r, "sub")
}

func waitValue(t *testing.T, r *Reloader[string], want string) {
	t.Helper()
	deadline := time.Now().Add(Recheck / 2)
	for r.current.Load().Value != want {
		if time.Now().After(deadline) {
			t.Fatalf("value = %q, want %q", r.current.Load().Value, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
