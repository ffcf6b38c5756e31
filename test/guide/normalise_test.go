package guide

import (
	"regexp"
	"strings"
)

// The page shows the session as a reader with HOME /home/me runs it in
// /home/me/demo, against a server on port 6443 and a webhook on port 8443
// (WEBHOOK_PORT); the test runs it with a temporary HOME, in its demo
// directory, with free ports (ports_test.go). reader maps what the test's
// run printed to what that reader would see: the home directory and the
// ports, and kubectl's warning about a skew from the server's version
// dropped (the kubectl on PATH may be older than 1.37).
const (
	pageHome        = "/home/me"
	pageWebhookPort = "8443"
)

func reader(out string, s *session) string {
	out = strings.ReplaceAll(out, s.home, pageHome)
	out = s.ports.page(out)
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		// kubectl's skew warning, and the go command's progress on a
		// machine whose module cache lacks what a page builds (a reader
		// sees it once; the page shows a warm cache)
		if !strings.Contains(l, "version difference between client") && !strings.HasPrefix(l, "go: downloading ") {
			keep = append(keep, l)
		}
	}
	return strings.TrimRight(strings.Join(keep, "\n"), "\n")
}

// varying are the parts of an output that differ from run to run, replaced
// by a placeholder on both sides before the comparison: kubectl's ages and
// every other duration (5s, 2m30s, 2.55ms, 30.5µs; which includes quantities
// like 100m), the times of JUnit reports (time="0.379"), UIDs (and audit
// IDs), RFC 3339 timestamps, resourceVersions, and the five random
// characters the server appends to a generateName.
var varying = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "<time>"},
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "<uid>"},
	{regexp.MustCompile(`(resourceVersion["']?:\s*["']?)\d+`), "${1}<rv>"},
	{regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s|m|h|d)(\d+(\.\d+)?(ms|s|m|h))*\b *`), "<duration> "},
	{regexp.MustCompile(`time="\d+(\.\d+)?"`), `time="<seconds>"`},
	{regexp.MustCompile(`-[bcdfghjklmnpqrstvwxz2456789]{5}\b`), "-<gen>"},
}

// comparable is an output with its varying parts replaced and trailing
// blanks dropped from each line and from the end.
func comparable(out string) string {
	for _, v := range varying {
		out = v.re.ReplaceAllString(out, v.with)
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}
