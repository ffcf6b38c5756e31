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
	calls := 0
	load := func() (Loaded[int], error) {
		calls++
		switch calls {
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
	if calls < 3 {
		t.Errorf("loads = %d, want at least 3", calls)
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
