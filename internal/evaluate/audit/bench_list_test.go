package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/internal/evaluate"
)

// BenchmarkReadList reads one List document of 20,000 objects (as
// kubectl get -A -o yaml or -o json writes it) as an audit of files does
// (LoadFiles, then Each), and reports the peak heap in use, sampled every
// 20 ms:
//
//	go test -run '^$' -bench ReadList -benchtime 5x ./internal/evaluate/audit
//
// Measured 2026-11-30 on the shared 2-core machine, -benchtime 5x
// -count 3 (each op reads the file twice: LoadFiles and Each):
//
//	         before (ce61017, List decoded whole)     after (items one at a time)
//	YAML     2.63–2.74 s/op, peak heap 551–612 MiB     2.68–2.79 s/op, 52–56 MiB
//	         1.57 GB, 24.5 M allocs/op                 1.76 GB, 26.4 M allocs/op
//	JSON     0.37–0.39 s/op, peak heap 208–285 MiB     0.54–0.57 s/op, 100–102 MiB
//	         334 MB, 4.25 M allocs/op                  355 MB, 4.29 M allocs/op
//
// JSON is slower for the second pass over the document's text that finds
// its kind and items before any item is decoded.
func BenchmarkReadList(b *testing.B) {
	const n = 20_000
	for _, format := range []string{"yaml", "json"} {
		b.Run("format="+format, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "list."+format)
			if err := writeBenchList(path, n, format == "json"); err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			b.ReportAllocs()
			peak := startHeapSampler()
			for b.Loop() {
				src, err := LoadFiles(path)
				if err != nil {
					b.Fatal(err)
				}
				read := 0
				err = src.Each(context.Background(), func(page []evaluate.Object) error {
					read += len(page)
					return nil
				})
				if err != nil || read != n {
					b.Fatalf("read %d objects (%v), want %d", read, err, n)
				}
			}
			b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB")
		})
	}
}

// BenchmarkAuditList audits one List document of 20,000 objects (YAML,
// as kubectl writes it) through BenchmarkAudit's configuration on
// GOMAXPROCS workers, and reports the peak heap in use:
//
//	go test -run '^$' -bench AuditList -benchtime 1x ./internal/evaluate/audit
//
// Measured 2026-11-30, one run each: before (ce61017) 41.3 s, peak heap
// 496 MiB, 18.9 GB allocated; after 41.5 s, peak heap 183 MiB, 19.8 GB
// allocated (the params read again for the seed, seeded objects put back).
func BenchmarkAuditList(b *testing.B) {
	const n = 20_000
	dir := b.TempDir()
	if err := writeBenchList(filepath.Join(dir, "list.yaml"), n, false); err != nil {
		b.Fatal(err)
	}
	if err := writeBenchObjects(dir, 0); err != nil { // the namespaces
		b.Fatal(err)
	}
	config, responses := benchConfig(b)
	runtime.GC()
	b.ReportAllocs()
	peak := startHeapSampler()
	for b.Loop() {
		src, err := LoadFiles(dir)
		if err != nil {
			b.Fatal(err)
		}
		r, err := Run(context.Background(), src, Options{Config: config, Responses: responses})
		if err != nil {
			b.Fatal(err)
		}
		if r.Objects != n+benchNamespaces || len(r.NotEvaluated) > 0 {
			b.Fatalf("audited %d objects, %d not evaluated; want %d", r.Objects, len(r.NotEvaluated), n+benchNamespaces)
		}
	}
	b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB")
}

// writeBenchList writes benchObject 0 to n-1 as the items of a List, in
// YAML as kubectl writes it (items first, each indented under its "-"),
// or in JSON.
func writeBenchList(path string, n int, asJSON bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if asJSON {
		items := make([]any, n)
		for i := range items {
			if err := yaml.Unmarshal([]byte(benchObject(i)), &items[i]); err != nil {
				return err
			}
		}
		err = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "v1", "kind": "List", "items": items,
			"metadata": map[string]any{"resourceVersion": ""}})
	} else {
		_, err = w.WriteString("apiVersion: v1\nitems:\n")
		for i := 0; i < n && err == nil; i++ {
			lines := strings.Split(strings.TrimSuffix(benchObject(i), "\n"), "\n")
			_, err = w.WriteString("- " + strings.Join(lines, "\n  ") + "\n")
		}
		if err == nil {
			_, err = w.WriteString("kind: List\nmetadata:\n  resourceVersion: \"\"\n")
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
