package cireport

import (
	"encoding/json"
	"io"
)

// SARIF levels of a Result.
const (
	LevelError   = "error"
	LevelWarning = "warning"
	LevelNote    = "note"
)

// SARIFSchema and SARIFVersion are what a SARIF 2.1.0 log declares.
const (
	SARIFSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
	SARIFVersion = "2.1.0"
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

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string     `json:"id"`
	Name             string     `json:"name,omitempty"`
	ShortDescription *sarifText `json:"shortDescription,omitempty"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID     string          `json:"ruleId"`
	RuleIndex  int             `json:"ruleIndex"`
	Level      string          `json:"level"`
	Message    sarifText       `json:"message"`
	Locations  []sarifLocation `json:"locations,omitempty"`
	Properties map[string]any  `json:"properties,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifLogical struct {
	Name               string `json:"name,omitempty"`
	FullyQualifiedName string `json:"fullyQualifiedName,omitempty"`
	Kind               string `json:"kind,omitempty"`
}

// WriteSARIF writes one SARIF 2.1.0 run of tool with rules and results; a
// result's rule must be among rules.
func WriteSARIF(w io.Writer, tool Tool, rules []Rule, results []Result) error {
	index := map[string]int{}
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: tool.Name, Version: tool.Version, InformationURI: tool.InformationURI,
		Rules: []sarifRule{}}}, Results: []sarifResult{}}
	for i, r := range rules {
		index[r.ID] = i
		sr := sarifRule{ID: r.ID, Name: r.Name}
		if r.Description != "" {
			sr.ShortDescription = &sarifText{Text: r.Description}
		}
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sr)
	}
	for _, r := range results {
		sr := sarifResult{RuleID: r.RuleID, RuleIndex: index[r.RuleID], Level: r.Level, Message: sarifText{Text: r.Message},
			Properties: r.Properties}
		loc := sarifLocation{}
		if r.File != "" {
			loc.PhysicalLocation = &sarifPhysical{ArtifactLocation: sarifArtifact{URI: r.File}}
			if r.Line > 0 {
				loc.PhysicalLocation.Region = &sarifRegion{StartLine: r.Line}
			}
		}
		if r.Object != "" {
			loc.LogicalLocations = []sarifLogical{{Name: r.Object, FullyQualifiedName: r.Object, Kind: "resource"}}
		}
		if loc.PhysicalLocation != nil || loc.LogicalLocations != nil {
			sr.Locations = []sarifLocation{loc}
		}
		run.Results = append(run.Results, sr)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: SARIFSchema, Version: SARIFVersion, Runs: []sarifRun{run}})
}
