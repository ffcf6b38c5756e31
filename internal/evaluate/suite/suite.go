// Package suite is `admitd test`: test suites of admission requests and
// the outcomes expected of them (allowed or denied, the message, fields of
// the final object, warnings, audit annotations), each case run through
// internal/evaluate on a fresh in-process admitd; with a text summary and
// JUnit XML for CI. It is not a general test framework: one case is one
// request.
package suite

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// APIVersion and Kind of a suite file.
const (
	APIVersion = "eval.admitd.io/v1alpha1"
	Kind       = "TestSuite"
)

// Suite is one suite file. Paths in it are relative to the file's
// directory.
type Suite struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Name defaults to the file's name.
	Name string `json:"name,omitempty"`
	// Files are the configuration every case starts from: files and
	// directories of objects, as admitd eval -f.
	Files []string `json:"files,omitempty"`
	// Objects are more objects, written inline.
	Objects []map[string]any `json:"objects,omitempty"`
	// WebhookResponses is a recorded-responses file for every case.
	WebhookResponses string `json:"webhookResponses,omitempty"`
	// Server configures the in-process server of every case.
	Server Server `json:"server,omitempty"`
	Cases  []Case `json:"cases"`

	// Path is the file the suite was read from.
	Path string `json:"-"`
}

// Server is the in-process server's configuration, as admitd serve's flags
// of the same names.
type Server struct {
	EnableAdmissionPlugins     []string `json:"enableAdmissionPlugins,omitempty"`
	DisableAdmissionPlugins    []string `json:"disableAdmissionPlugins,omitempty"`
	AdmissionControlConfigFile string   `json:"admissionControlConfigFile,omitempty"`
	FeatureGates               string   `json:"featureGates,omitempty"`
	AllowPrivileged            bool     `json:"allowPrivileged,omitempty"`
	// AuthorizationMode defaults to AlwaysAllow, as admitd eval's.
	AuthorizationMode []string `json:"authorizationMode,omitempty"`
	// QuotaController defaults to true, as admitd serve's.
	QuotaController *bool  `json:"quotaController,omitempty"`
	ServiceMap      string `json:"serviceMap,omitempty"`
	// CallUnreachableWebhooks is admitd eval's --call-unreachable-webhooks.
	CallUnreachableWebhooks bool `json:"callUnreachableWebhooks,omitempty"`
}

// Case is one request and what is expected of it.
type Case struct {
	Name string `json:"name"`
	// Request is the request file (an object or an AdmissionReview), or
	// Object the object inline.
	Request string         `json:"request,omitempty"`
	Object  map[string]any `json:"object,omitempty"`
	// Operation is CREATE (default), UPDATE, DELETE or CONNECT.
	Operation string `json:"operation,omitempty"`
	// ResourceName is the object's name (a CONNECT: the pod's, node's or
	// service's); Subresource the subresource written or connected to.
	ResourceName string `json:"resourceName,omitempty"`
	Subresource  string `json:"subresource,omitempty"`
	// Old (a file) or OldObject (inline) is the stored object an UPDATE
	// replaces or a DELETE deletes, when it is not among the files.
	Old       string         `json:"old,omitempty"`
	OldObject map[string]any `json:"oldObject,omitempty"`
	Namespace string         `json:"namespace,omitempty"`
	User      *User          `json:"user,omitempty"`
	// Impersonator sends the request, impersonating User (default: an
	// administrator); it has no extra.
	Impersonator *User `json:"impersonator,omitempty"`
	DryRun       bool  `json:"dryRun,omitempty"`
	// Files and Objects are added to the suite's for this case.
	Files   []string         `json:"files,omitempty"`
	Objects []map[string]any `json:"objects,omitempty"`
	// WebhookResponses replaces the suite's for this case.
	WebhookResponses string `json:"webhookResponses,omitempty"`
	Expect           Expect `json:"expect"`
}

// User is who sends a case's request.
type User struct {
	Name   string              `json:"name"`
	UID    string              `json:"uid,omitempty"`
	Groups []string            `json:"groups,omitempty"`
	Extra  map[string][]string `json:"extra,omitempty"`
}

// Expect is what a case expects; what is left out is not checked.
type Expect struct {
	// Allowed: the request succeeds (true) or is refused (false).
	Allowed *bool `json:"allowed,omitempty"`
	// Decision is Allowed, Denied (by admission) or Error (refused after
	// admission).
	Decision string `json:"decision,omitempty"`
	// Code is the HTTP status code of a refusal.
	Code int32 `json:"code,omitempty"`
	// Message must be in the refusal's message; ExactMessage must be it.
	Message      string `json:"message,omitempty"`
	ExactMessage string `json:"exactMessage,omitempty"`
	// Object is a partial object the final object must contain: every
	// field given, with the same value (lists: the same length, each item
	// containing the item given).
	Object map[string]any `json:"object,omitempty"`
	// Fields are JSONPath expressions ({.metadata.labels.team}, braces
	// optional) of the final object and the value each must have: one
	// match is compared as a value, several as a list.
	Fields map[string]any `json:"fields,omitempty"`
	// Warnings must each be in one of the warnings.
	Warnings []string `json:"warnings,omitempty"`
	// NoWarnings: there must be none.
	NoWarnings bool `json:"noWarnings,omitempty"`
	// AuditAnnotations must each be there with that value.
	AuditAnnotations map[string]string `json:"auditAnnotations,omitempty"`
}

// Load reads the suites of paths: suite files, and directories searched
// for YAML files of kind TestSuite.
func Load(paths ...string) ([]*Suite, error) {
	var out []*Suite
	for _, p := range paths {
		found, err := loadPath(p)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no %s %s in %s", APIVersion, Kind, strings.Join(paths, ", "))
	}
	return out, nil
}

func loadPath(p string) ([]*Suite, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		s, err := LoadFile(p)
		if err != nil {
			return nil, err
		}
		return []*Suite{s}, nil
	}
	var out []*Suite
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !isYAML(path) || !isSuite(path) {
			return err
		}
		s, err := LoadFile(path)
		if err == nil {
			out = append(out, s)
		}
		return err
	})
	return out, err
}

func isYAML(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".yaml" || ext == ".yml"
}

// isSuite reports whether the file's first document is a TestSuite.
func isSuite(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var head struct{ APIVersion, Kind string }
	first := strings.SplitN(string(data), "\n---", 2)[0]
	return yaml.Unmarshal([]byte(first), &head) == nil && head.Kind == Kind && head.APIVersion == APIVersion
}

// LoadFile reads one suite file.
func LoadFile(path string) (*Suite, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Suite
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s.APIVersion != APIVersion || s.Kind != Kind {
		return nil, fmt.Errorf("%s: want apiVersion %s, kind %s", path, APIVersion, Kind)
	}
	s.Path = path
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return &s, s.check()
}

func (s *Suite) check() error {
	if len(s.Cases) == 0 {
		return fmt.Errorf("%s: no cases", s.Path)
	}
	seen := map[string]bool{}
	for i, c := range s.Cases {
		switch {
		case c.Name == "":
			return fmt.Errorf("%s: case %d has no name", s.Path, i+1)
		case seen[c.Name]:
			return fmt.Errorf("%s: two cases are named %q", s.Path, c.Name)
		case (c.Request == "") == (c.Object == nil):
			return fmt.Errorf("%s: case %q needs request (a file) or object (inline), one of them", s.Path, c.Name)
		case c.Old != "" && c.OldObject != nil:
			return fmt.Errorf("%s: case %q has both old and oldObject", s.Path, c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}
