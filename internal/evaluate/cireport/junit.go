// Package cireport writes findings in the formats CI systems read: JUnit
// XML (test results: GitLab, Jenkins, GitHub Actions' test reporters) and
// SARIF 2.1.0 (code scanning: GitHub, Azure DevOps). `admitd audit` and
// `admitd replay` turn their reports into Suites and Results.
package cireport

import (
	"encoding/xml"
	"io"
)

// Suite is a JUnit testsuite: one webhook, policy and binding, or plugin.
type Suite struct {
	Name  string
	Cases []Case
}

// Case is a JUnit testcase: one object or request, failed when it is
// denied.
type Case struct {
	Name string
	// ClassName groups the cases (the suite's name by default).
	ClassName string
	// Failure, when set, fails the case.
	Failure *Failure
	// SystemOut is what the case says beyond a failure (warnings,
	// patches).
	SystemOut string
}

// Failure is why a case failed.
type Failure struct {
	Type    string
	Message string
	Text    string
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Type    string `xml:"type,attr,omitempty"`
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the suites as a JUnit XML testsuites document named
// name.
func WriteJUnit(w io.Writer, name string, suites []Suite) error {
	doc := junitSuites{Name: name, Suites: []junitSuite{}}
	for _, s := range suites {
		js := junitSuite{Name: s.Name, Cases: []junitCase{}}
		for _, c := range s.Cases {
			jc := junitCase{Name: c.Name, ClassName: c.ClassName, SystemOut: c.SystemOut}
			if jc.ClassName == "" {
				jc.ClassName = s.Name
			}
			if f := c.Failure; f != nil {
				jc.Failure = &junitFailure{Type: f.Type, Message: f.Message, Text: f.Text}
				js.Failures++
			}
			js.Cases = append(js.Cases, jc)
		}
		js.Tests = len(js.Cases)
		doc.Tests += js.Tests
		doc.Failures += js.Failures
		doc.Suites = append(doc.Suites, js)
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
