package lint

import (
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/admitd/admitd/pkg/sarif"
)

// WriteSARIF writes fs as a SARIF 2.1.0 log with one run, the rules of
// every ID in the driver, and a result per finding: its file as the
// physical location when it came from one, the object, webhook and field
// as the logical location.
func WriteSARIF(w io.Writer, fs []Finding) error {
	all := Rules()
	driver := sarif.Driver{Name: "admitd-lint", Rules: make([]sarif.Rule, len(all))}
	for i, r := range all {
		driver.Rules[i] = sarif.Rule{ID: r.ID, Name: sarifName(r.Title), ShortDescription: &sarif.Text{Text: r.Title},
			FullDescription: &sarif.Text{Text: r.Why}, Help: &sarif.Text{Text: r.Fix}}
	}
	results := make([]sarif.Result, len(fs))
	for i, f := range fs {
		results[i] = sarif.Result{RuleID: f.ID, Level: sarifLevel(f.Severity), Message: sarif.Text{Text: f.Message},
			Locations: []sarif.Location{sarifLocationOf(f)}}
	}
	return sarif.Write(w, driver, results)
}

func sarifLevel(s Severity) string {
	switch s {
	case Error:
		return sarif.LevelError
	case Warning:
		return sarif.LevelWarning
	}
	return sarif.LevelNote
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

func sarifLocationOf(f Finding) sarif.Location {
	name := f.Object.Kind + "/" + f.Object.Name
	if f.Object.Namespace != "" {
		name = f.Object.Kind + "/" + f.Object.Namespace + "/" + f.Object.Name
	}
	if f.Field != "" {
		name += "." + f.Field
	}
	loc := sarif.Location{LogicalLocations: []sarif.LogicalLocation{{FullyQualifiedName: name, Kind: "object"}}}
	if file := sourceFile(f.Object.Source); file != "" {
		uri := (&url.URL{Path: filepath.ToSlash(file)}).String()
		loc.PhysicalLocation = &sarif.PhysicalLocation{ArtifactLocation: sarif.ArtifactLocation{URI: uri}}
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
