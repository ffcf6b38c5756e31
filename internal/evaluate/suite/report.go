package suite

import (
	"fmt"
	"io"
	"strings"

	"github.com/admitd/admitd/internal/evaluate/cireport"
)

// WriteCase prints one case's line and, when it failed, why.
func WriteCase(w io.Writer, r CaseResult) error {
	state := "PASS"
	if !r.Passed() {
		state = "FAIL"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s/%s (%.2fs)\n", state, r.Suite, r.Case, r.Duration.Seconds())
	if r.Err != nil {
		fmt.Fprintf(&b, "    error: %v\n", r.Err)
	}
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "    %s\n", f)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Summary counts the cases: "N cases: P passed, F failed".
func Summary(results []CaseResult) string {
	passed := 0
	for _, r := range results {
		if r.Passed() {
			passed++
		}
	}
	return fmt.Sprintf("%d cases: %d passed, %d failed", len(results), passed, len(results)-passed)
}

// WriteJUnit writes the results as JUnit XML (the form Jenkins, GitLab
// and GitHub reporters read): one testsuite per suite, one testcase per
// case, with their times; a case whose expectations fail has a failure,
// one that could not run an error.
func WriteJUnit(w io.Writer, results []CaseResult) error {
	doc := cireport.JUnit{Timed: true}
	index := map[string]int{}
	for _, r := range results {
		i, ok := index[r.Suite]
		if !ok {
			i = len(doc.Suites)
			index[r.Suite] = i
			doc.Suites = append(doc.Suites, cireport.Suite{Name: r.Suite})
		}
		c := cireport.Case{Name: r.Case, ClassName: r.Suite, Time: r.Duration}
		switch {
		case r.Err != nil:
			c.Error = &cireport.Failure{Message: r.Err.Error(), Type: "error", Text: r.Err.Error()}
		case len(r.Failures) > 0:
			c.Failure = &cireport.Failure{Message: r.Failures[0], Type: "failure", Text: strings.Join(r.Failures, "\n")}
		}
		doc.Suites[i].Cases = append(doc.Suites[i].Cases, c)
	}
	return doc.Write(w)
}
