package lint

import (
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"strings"
)

// SARIF 2.1.0 (OASIS), the subset a lint report needs.
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
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID               string    `json:"id"`
	Name             string    `json:"name"`
	ShortDescription sarifText `json:"shortDescription"`
	FullDescription  sarifText `json:"fullDescription"`
	Help             sarifText `json:"help"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifLogical struct {
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

const sarifSchema = "https://json.schemastore.org/sarif-2.1.0.json"

// WriteSARIF writes fs as a SARIF 2.1.0 log with one run, the rules of
// every ID in the driver, and a result per finding: its file as the
// physical location when it came from one, the object, webhook and field
// as the logical location.
func WriteSARIF(w io.Writer, fs []Finding) error {
	all := Rules()
	index := map[string]int{}
	driver := sarifDriver{Name: "admitd-lint", Rules: make([]sarifRule, len(all))}
	for i, r := range all {
		index[r.ID] = i
		driver.Rules[i] = sarifRule{ID: r.ID, Name: sarifName(r.Title), ShortDescription: sarifText{r.Title},
			FullDescription: sarifText{r.Why}, Help: sarifText{r.Fix}}
	}
	results := make([]sarifResult, len(fs))
	for i, f := range fs {
		results[i] = sarifResult{RuleID: f.ID, RuleIndex: index[f.ID], Level: sarifLevel(f.Severity),
			Message: sarifText{f.Message}, Locations: []sarifLocation{sarifLocationOf(f)}}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: sarifSchema, Version: "2.1.0",
		Runs: []sarifRun{{Tool: sarifTool{Driver: driver}, Results: results}}})
}

func sarifLevel(s Severity) string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "note"
}

// sarifName turns a title into the PascalCase name SARIF suggests.
func sarifName(title string) string {
	var b strings.Builder
	for _, word := range strings.FieldsFunc(title, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		b.WriteString(strings.ToUpper(word[:1]) + word[1:])
	}
	return b.String()
}

func sarifLocationOf(f Finding) sarifLocation {
	name := f.Object.Kind + "/" + f.Object.Name
	if f.Object.Namespace != "" {
		name = f.Object.Kind + "/" + f.Object.Namespace + "/" + f.Object.Name
	}
	if f.Field != "" {
		name += "." + f.Field
	}
	loc := sarifLocation{LogicalLocations: []sarifLogical{{FullyQualifiedName: name, Kind: "object"}}}
	if file := sourceFile(f.Object.Source); file != "" {
		uri := (&url.URL{Path: filepath.ToSlash(file)}).String()
		loc.PhysicalLocation = &sarifPhysical{ArtifactLocation: sarifArtifact{URI: uri}}
	}
	return loc
}

// sourceFile is the file part of a source ("path#2.items[0]" → "path"),
// empty for standard input and servers.
func sourceFile(source string) string {
	file, _, _ := strings.Cut(source, "#")
	if file == "" || strings.HasPrefix(file, "<") || strings.Contains(file, "://") {
		return ""
	}
	return file
}
