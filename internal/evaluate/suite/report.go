package suite

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
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

// JUnit XML (the form Jenkins, GitLab and GitHub reporters read): one
// testsuite per suite, one testcase per case; a case whose expectations
// fail has a failure, one that could not run an error.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the results as JUnit XML.
func WriteJUnit(w io.Writer, results []CaseResult) error {
	doc := junitSuites{}
	index := map[string]int{}
	var total time.Duration
	suiteTime := map[int]time.Duration{}
	for _, r := range results {
		i, ok := index[r.Suite]
		if !ok {
			i = len(doc.Suites)
			index[r.Suite] = i
			doc.Suites = append(doc.Suites, junitSuite{Name: r.Suite})
		}
		s := &doc.Suites[i]
		c := junitCase{Name: r.Case, ClassName: r.Suite, Time: seconds(r.Duration)}
		switch {
		case r.Err != nil:
			c.Error = &junitProblem{Message: r.Err.Error(), Type: "error", Text: r.Err.Error()}
			s.Errors++
			doc.Errors++
		case len(r.Failures) > 0:
			c.Failure = &junitProblem{Message: r.Failures[0], Type: "failure", Text: strings.Join(r.Failures, "\n")}
			s.Failures++
			doc.Failures++
		}
		s.Tests++
		doc.Tests++
		suiteTime[i] += r.Duration
		s.Time = seconds(suiteTime[i])
		total += r.Duration
		s.Cases = append(s.Cases, c)
	}
	doc.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
