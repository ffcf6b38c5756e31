package cireport

import (
	"io"

	"github.com/admitd/admitd/pkg/sarif"
)

// SARIF levels of a Result.
const (
	LevelError   = sarif.LevelError
	LevelWarning = sarif.LevelWarning
	LevelNote    = sarif.LevelNote
)

// Tool is the tool a SARIF run names.
type Tool struct {
	Name           string
	Version        string
	InformationURI string
}

// Rule is a SARIF reportingDescriptor: one webhook, or one policy and
// binding.
type Rule struct {
	ID          string
	Name        string
	Description string
}

// Result is one finding of a rule.
type Result struct {
	RuleID string
	// Level is LevelError, LevelWarning or LevelNote.
	Level   string
	Message string
	// Object names the object or request, as a logical location (its
	// fully qualified name, of kind "resource").
	Object string
	// File, when set, is the file the object or request came from (a
	// physical location), Line its line there (0: none).
	File string
	Line int
	// Properties are extra facts (a JSON patch, an audit ID).
	Properties map[string]any
}

// WriteSARIF writes one SARIF 2.1.0 run of tool with rules and results; a
// result's rule must be among rules.
func WriteSARIF(w io.Writer, tool Tool, rules []Rule, results []Result) error {
	driver := sarif.Driver{Name: tool.Name, Version: tool.Version, InformationURI: tool.InformationURI, Rules: []sarif.Rule{}}
	for _, r := range rules {
		sr := sarif.Rule{ID: r.ID, Name: r.Name}
		if r.Description != "" {
			sr.ShortDescription = &sarif.Text{Text: r.Description}
		}
		driver.Rules = append(driver.Rules, sr)
	}
	out := make([]sarif.Result, 0, len(results))
	for _, r := range results {
		sr := sarif.Result{RuleID: r.RuleID, Level: r.Level, Message: sarif.Text{Text: r.Message}, Properties: r.Properties}
		if loc, ok := location(r); ok {
			sr.Locations = []sarif.Location{loc}
		}
		out = append(out, sr)
	}
	return sarif.Write(w, driver, out)
}

// location is where r is: its file and line, its object; ok when it has
// either.
func location(r Result) (sarif.Location, bool) {
	var loc sarif.Location
	if r.File != "" {
		loc.PhysicalLocation = &sarif.PhysicalLocation{ArtifactLocation: sarif.ArtifactLocation{URI: r.File}}
		if r.Line > 0 {
			loc.PhysicalLocation.Region = &sarif.Region{StartLine: r.Line}
		}
	}
	if r.Object != "" {
		loc.LogicalLocations = []sarif.LogicalLocation{{Name: r.Object, FullyQualifiedName: r.Object, Kind: "resource"}}
	}
	return loc, loc.PhysicalLocation != nil || loc.LogicalLocations != nil
}
