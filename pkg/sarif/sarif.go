// Package sarif writes SARIF 2.1.0 (OASIS Static Analysis Results
// Interchange Format) logs, the form code scanning services (GitHub,
// Azure DevOps) read: one run of one tool, its rules, and results with
// physical and logical locations. It is the subset admitd lint, audit and
// replay write, not a complete model of the format, nor a reader.
package sarif

import (
	"encoding/json"
	"io"
)

// Schema and Version are what a SARIF 2.1.0 log declares.
const (
	Schema  = "https://json.schemastore.org/sarif-2.1.0.json"
	Version = "2.1.0"
)

// Levels of a Result.
const (
	LevelError   = "error"
	LevelWarning = "warning"
	LevelNote    = "note"
)

// Driver is the tool that made a run (a toolComponent), with every rule
// its results may name.
type Driver struct {
	Name           string `json:"name"`
	Version        string `json:"version,omitempty"`
	InformationURI string `json:"informationUri,omitempty"`
	Rules          []Rule `json:"rules"`
}

// Rule is a reportingDescriptor: what a result is a finding of.
type Rule struct {
	ID               string `json:"id"`
	Name             string `json:"name,omitempty"`
	ShortDescription *Text  `json:"shortDescription,omitempty"`
	FullDescription  *Text  `json:"fullDescription,omitempty"`
	Help             *Text  `json:"help,omitempty"`
}

// Text is a message or description.
type Text struct {
	Text string `json:"text"`
}

// Result is one finding of a rule. Write sets its RuleIndex.
type Result struct {
	RuleID    string `json:"ruleId"`
	RuleIndex int    `json:"ruleIndex"`
	// Level is LevelError, LevelWarning or LevelNote.
	Level     string     `json:"level"`
	Message   Text       `json:"message"`
	Locations []Location `json:"locations,omitempty"`
	// Properties are facts the format has no place for.
	Properties map[string]any `json:"properties,omitempty"`
}

// Location is where a result is: in a file, and in what (an object, a
// request).
type Location struct {
	PhysicalLocation *PhysicalLocation `json:"physicalLocation,omitempty"`
	LogicalLocations []LogicalLocation `json:"logicalLocations,omitempty"`
}

// PhysicalLocation is a file, and a line of it when Region is set.
type PhysicalLocation struct {
	ArtifactLocation ArtifactLocation `json:"artifactLocation"`
	Region           *Region          `json:"region,omitempty"`
}

// ArtifactLocation is a file's URI (a relative path is relative to the
// run's working directory).
type ArtifactLocation struct {
	URI string `json:"uri"`
}

// Region is a line of a file (1-based).
type Region struct {
	StartLine int `json:"startLine"`
}

// LogicalLocation names what a result is in.
type LogicalLocation struct {
	Name               string `json:"name,omitempty"`
	FullyQualifiedName string `json:"fullyQualifiedName,omitempty"`
	Kind               string `json:"kind,omitempty"`
}

type sarifLog struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []run  `json:"runs"`
}

type run struct {
	Tool    tool     `json:"tool"`
	Results []Result `json:"results"`
}

type tool struct {
	Driver Driver `json:"driver"`
}

// Write writes a SARIF 2.1.0 log of one run of driver with results,
// indented, each result's RuleIndex the index of its RuleID among the
// driver's rules (a result's rule must be there).
func Write(w io.Writer, driver Driver, results []Result) error {
	index := make(map[string]int, len(driver.Rules))
	for i, r := range driver.Rules {
		index[r.ID] = i
	}
	if driver.Rules == nil {
		driver.Rules = []Rule{}
	}
	out := make([]Result, len(results))
	for i, r := range results {
		r.RuleIndex = index[r.RuleID]
		out[i] = r
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: Schema, Version: Version, Runs: []run{{Tool: tool{Driver: driver}, Results: out}}})
}
