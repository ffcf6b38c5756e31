// Package cireport writes findings in the formats CI systems read: JUnit
// XML (test results: GitLab, Jenkins, GitHub Actions' test reporters) and
// SARIF 2.1.0 (code scanning: GitHub, Azure DevOps; the log itself is
// pkg/sarif's, which admitd lint writes too). `admitd audit` and `admitd
// replay` turn their reports into Suites and Results, `admitd test` its
// case results into a timed JUnit document.
package cireport

import (
	"encoding/xml"
	"fmt"
	"io"
	"time"
)

// JUnit is a JUnit XML testsuites document.
type JUnit struct {
	// Name is the testsuites' name (none when empty).
	Name string
	// Timed documents give the time of each testcase (Case.Time), of
	// each testsuite and of the whole, and the error count of the whole:
	// admitd test's results. Findings (admitd audit, replay) take no
	// time.
	Timed  bool
	Suites []Suite
}

// Suite is a JUnit testsuite: one webhook, policy and binding, or plugin;
// one test suite.
type Suite struct {
	Name  string
	Cases []Case
}

// Case is a JUnit testcase: one object or request, failed when it is
// denied; one test case.
type Case struct {
	Name string
	// ClassName groups the cases (the suite's name by default).
	ClassName string
	// Time is how long the case took (written in Timed documents).
	Time time.Duration
	// Failure, when set, fails the case; Error says it could not run.
	Failure *Failure
	Error   *Failure
	// SystemOut is what the case says beyond a failure (warnings,
	// patches).
	SystemOut string
}

// Failure is why a case failed, or could not run.
type Failure struct {
	Type    string
	Message string
	Text    string
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr,omitempty"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   *int         `xml:"errors,attr,omitempty"`
	Time     string       `xml:"time,attr,omitempty"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Time     string      `xml:"time,attr,omitempty"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr,omitempty"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// junitProblem is a failure or error element. Its attributes are in the
// order each command has always written (type first in findings,
// message first in timed test results), so reports stay the same bytes
// for the CI systems that store and compare them.
type junitProblem struct {
	Attrs []xml.Attr `xml:",any,attr"`
	Text  string     `xml:",chardata"`
}

func problem(f *Failure, timed bool) *junitProblem {
	if f == nil {
		return nil
	}
	typ, msg := xml.Attr{Name: xml.Name{Local: "type"}, Value: f.Type}, xml.Attr{Name: xml.Name{Local: "message"}, Value: f.Message}
	p := &junitProblem{Text: f.Text}
	switch {
	case timed:
		p.Attrs = []xml.Attr{msg, typ}
	case f.Type != "":
		p.Attrs = []xml.Attr{typ, msg}
	default:
		p.Attrs = []xml.Attr{msg}
	}
	return p
}

// WriteJUnit writes the suites as a JUnit XML testsuites document named
// name.
func WriteJUnit(w io.Writer, name string, suites []Suite) error {
	return JUnit{Name: name, Suites: suites}.Write(w)
}

// Write writes j as JUnit XML.
func (j JUnit) Write(w io.Writer) error {
	doc := junitSuites{Name: j.Name, Suites: []junitSuite{}}
	var errs int
	var total time.Duration
	for _, s := range j.Suites {
		js, took := j.suite(s)
		doc.Tests += js.Tests
		doc.Failures += js.Failures
		errs += js.Errors
		total += took
		doc.Suites = append(doc.Suites, js)
	}
	if j.Timed {
		doc.Errors, doc.Time = &errs, seconds(total)
	}
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

// suite is s's testsuite, and the time its cases took.
func (j JUnit) suite(s Suite) (junitSuite, time.Duration) {
	js := junitSuite{Name: s.Name, Cases: []junitCase{}}
	var took time.Duration
	for _, c := range s.Cases {
		jc := junitCase{Name: c.Name, ClassName: c.ClassName, SystemOut: c.SystemOut,
			Failure: problem(c.Failure, j.Timed), Error: problem(c.Error, j.Timed)}
		if jc.ClassName == "" {
			jc.ClassName = s.Name
		}
		if jc.Failure != nil {
			js.Failures++
		}
		if jc.Error != nil {
			js.Errors++
		}
		if j.Timed {
			jc.Time = seconds(c.Time)
		}
		took += c.Time
		js.Cases = append(js.Cases, jc)
	}
	js.Tests = len(js.Cases)
	if j.Timed {
		js.Time = seconds(took)
	}
	return js, took
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
