// Package sidebysidesummary tests test/sidebyside-summary.awk, the ratios
// test/sidebyside-load.sh ends with.
package sidebysidesummary

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Two rounds of each tool's result line, as sidebyside-load.sh records
// them: round|name|server|cpu-ms/op|peak KiB|anon KiB after|line.
const results = `1|(a) lists|admitd|5.0|300000|100000|lists: 10000 done (200.0/s), p50 800ms p99 2.5s; failed: ; second user
1|(a) lists|kube-apiserver|35.0|1500000|1300000|lists: 2500 done (40.0/s), p50 4.5s p99 10s; failed: ; second user
2|(a) lists|admitd|5.0|300000|100000|lists: 10000 done (200.0/s), p50 800ms p99 30s; failed: ; second user
2|(a) lists|kube-apiserver|35.0|1500000|1300000|lists: 2500 done (40.0/s), p50 4.5s p99 1m30s; failed: ; second user
1|(b) 2000 creates, no watchers|admitd|0.3|90000|40000|watchers: 0 watches (set up in 0s), 2000 creates in 500ms (4000/s, 0 failed); events
1|(b) 2000 creates, no watchers|h2floor|0.05|20000|10000|watchers: 0 watches (set up in 0s), 2000 creates in 200ms (10000/s, 0 failed); events
1|(b) 2000 creates, no watchers|kube-apiserver|1.5|500000|300000|watchers: 0 watches (set up in 0s), 2000 creates in 2s (1000/s, 0 failed); events
1|(b) 2000 creates, 1000 watchers|admitd|1.5|240000|50000|watchers: 1000 watches (set up in 300ms), 2000 creates in 2.5s (800/s, 0 failed); events
1|(b) 2000 creates, 1000 watchers|h2floor|1.4|40000|20000|watchers: 1000 watches (set up in 200ms), 2000 creates in 2.857s (700/s, 0 failed); events
1|(b) 2000 creates, 1000 watchers|kube-apiserver|12.0|1200000|300000|watchers: 1000 watches (set up in 500ms), 2000 creates in 19s (100/s, 0 failed); events
2|(b) 2000 creates, no watchers|admitd|0.3|90000|40000|watchers: 0 watches (set up in 0s), 2000 creates in 400ms (5000/s, 0 failed); events
2|(b) 2000 creates, 1000 watchers|admitd|1.5|240000|50000|watchers: 1000 watches (set up in 300ms), 2000 creates in 2.5s (800/s, 0 failed); events
1|(c) creates|admitd|0.2|100000|40000|creates=10000 clients=8 webhooks=false rate=5000/s p50=1.50ms p99=5.00ms failures=0
1|(c) creates|h2floor|0.05|13000|6000|creates=10000 clients=8 webhooks=false rate=10000/s p50=0.60ms p99=2.50ms failures=0
1|(c) creates|h2floor-durable|0.08|14000|6000|creates=10000 clients=8 webhooks=false rate=8000/s p50=0.80ms p99=3.00ms failures=0
1|(c) creates|kube-apiserver|1.0|400000|320000|creates=10000 clients=8 webhooks=false rate=1250/s p50=5.00ms p99=15.00ms failures=0
2|(c) creates|admitd|0.25|110000|40000|creates=10000 clients=8 webhooks=false rate=4000/s p50=1.50ms p99=5000µs failures=0
2|(c) creates|h2floor|0.1|13000|6000|creates=10000 clients=8 webhooks=false rate=10000/s p50=0.60ms p99=2.50ms failures=0
2|(c) creates|kube-apiserver|1.0|440000|360000|creates=10000 clients=8 webhooks=false rate=1000/s p50=5.00ms p99=20.00ms failures=0
2|(d) gets|admitd|0.1|170000|90000|get: 20000 done, rate=9000/s p50=0.75ms p99=3.00ms failures=0
`

func TestSummaryRatios(t *testing.T) {
	if _, err := exec.LookPath("awk"); err != nil {
		t.Skip("no awk on PATH")
	}
	path := filepath.Join(t.TempDir(), "results")
	if err := os.WriteFile(path, []byte(results), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("awk", "-f", "../sidebyside-summary.awk", path).CombinedOutput()
	if err != nil {
		t.Fatalf("awk: %v\n%s", err, out)
	}
	want := []string{
		// 35/5, 200/40, 10 s/2.5 s (round 2: 1m30s/30s), 1,500,000/300,000, 1,300,000/100,000
		"(a) lists                          CPU/op 7.0×  rate 5.0×  p99 3.0–4.0×  peak RSS 5.0×  anon RSS after 13.0×",
		// 1.5/0.3, 4000/1000, no p99 in loadmix's watchers line, 500,000/90,000, 300,000/40,000
		"(b) 2000 creates, no watchers      CPU/op 5.0×  rate 4.0×  p99 -  peak RSS 5.6×  anon RSS after 7.5×",
		"                                   h2floor against kube-apiserver: CPU/op 30.0×  p99 -",
		// no line of what the watchers leave for a run without them
		"(b) 2000 creates, 1000 watchers    CPU/op 8.0×  rate 8.0×  p99 -  peak RSS 5.0×  anon RSS after 6.0×",
		"                                   h2floor against kube-apiserver: CPU/op 8.6×  p99 -",
		// 800/4000 and 800/5000; 100/1000; 700/10000 (round 2 has neither)
		"                                   the rate the watchers leave: admitd 16–20%, kube-apiserver 10%, h2floor 7%",
		// round 1: 5×, 4×, 3×, 4×, 8×; round 2: 4×, 4×, 4× (5,000 µs), 4×, 9×
		"(c) creates                        CPU/op 4.0–5.0×  rate 4.0×  p99 3.0–4.0×  peak RSS 4.0×  anon RSS after 8.0–9.0×",
		"                                   h2floor against kube-apiserver: CPU/op 10.0–20.0×  p99 6.0–8.0×",
		// round 1 only: 1.0/0.08, 15/3, and admitd's 0.2 over 0.08
		"                                   h2floor -durable against kube-apiserver: CPU/op 12.5×  p99 5.0×; admitd's CPU/op is 2.5× the durable floor's",
		// no kube-apiserver run of (d): nothing to compare
		"(d) gets                           CPU/op -  rate -  p99 -  peak RSS -  anon RSS after -",
	}
	got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("summary:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
