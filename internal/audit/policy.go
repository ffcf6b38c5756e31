package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Policy is an audit.k8s.io/v1 Policy: an ordered list of rules, the first
// matching one deciding a request's level.
type Policy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Rules []PolicyRule `json:"rules"`
	// OmitStages are added to every rule's omitStages, and apply to requests
	// no rule matches.
	OmitStages []Stage `json:"omitStages,omitempty"`
	// OmitManagedFields is the default for rules that do not set it.
	OmitManagedFields bool `json:"omitManagedFields,omitempty"`

	// Warnings are the strict-decoding problems (unknown or duplicate
	// fields) the policy was accepted despite, as upstream logs them.
	Warnings []string `json:"-"`
}

// PolicyRule maps requests to a level. Every non-empty list must match; an
// empty list matches everything.
type PolicyRule struct {
	Level Level `json:"level"`
	// Users and UserGroups match the authenticated user (before
	// impersonation); a request matches UserGroups if any group is listed.
	Users      []string `json:"users,omitempty"`
	UserGroups []string `json:"userGroups,omitempty"`
	Verbs      []string `json:"verbs,omitempty"`
	// Resources and Namespaces make the rule match resource requests only;
	// the empty namespace "" matches cluster-scoped requests.
	Resources  []GroupResources `json:"resources,omitempty"`
	Namespaces []string         `json:"namespaces,omitempty"`
	// NonResourceURLs make the rule match non-resource requests only. An
	// entry is a path, "*", or a prefix ending in "*".
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
	OmitStages      []Stage  `json:"omitStages,omitempty"`
	// OmitManagedFields, when set, overrides the policy's default.
	OmitManagedFields *bool `json:"omitManagedFields,omitempty"`
}

// GroupResources selects resources of one API group ("" is core, "*" any).
// A resource is "pods", "pods/log", "*", "*/log" or "pods/*"; ResourceNames
// limits the rule to objects with these names.
type GroupResources struct {
	Group         string   `json:"group,omitempty"`
	Resources     []string `json:"resources,omitempty"`
	ResourceNames []string `json:"resourceNames,omitempty"`
}

var policyGV = schema.GroupVersion{Group: "audit.k8s.io", Version: "v1"}

// LoadPolicy reads an audit policy file (YAML or JSON), as
// --audit-policy-file does.
func LoadPolicy(path string) (*Policy, error) {
	if path == "" {
		return nil, errors.New("file path not specified")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read file path %q: %w", path, err)
	}
	p, err := ParsePolicy(data)
	if err != nil {
		return nil, fmt.Errorf("%w: from file %v", err, path)
	}
	return p, nil
}

// ParsePolicy decodes and validates an audit.k8s.io/v1 Policy. Like
// upstream, it decodes strictly first and, if the only problems are unknown
// or duplicate fields, accepts the policy leniently and reports them in
// Policy.Warnings. Input starting with "{" is JSON; otherwise only the first
// YAML document is read. A policy without rules is an error.
func ParsePolicy(data []byte) (*Policy, error) {
	// Data that looks like JSON is decoded as JSON, the rest as YAML.
	js, isJSON := data, utilyaml.IsJSONBuffer(data)
	if !isJSON {
		var err error
		if js, err = yaml.YAMLToJSON(data); err != nil {
			return nil, fmt.Errorf("failed decoding: %w", err)
		}
	}
	if err := checkPolicyKind(js); err != nil {
		return nil, err
	}
	p := &Policy{}
	var warnings []string
	if !isJSON {
		if _, err := yaml.YAMLToJSONStrict(data); err != nil {
			warnings = append(warnings, err.Error())
		}
	}
	strictErrs, err := kjson.UnmarshalStrict(js, p)
	if err != nil {
		return nil, fmt.Errorf("failed decoding: %w", err)
	}
	for _, e := range strictErrs {
		warnings = append(warnings, e.Error())
	}
	if len(warnings) > 0 {
		// Strict errors leave p fully decoded; start afresh anyway so the
		// result is exactly a lenient decode.
		p = &Policy{}
		if err := kjson.UnmarshalCaseSensitivePreserveInts(js, p); err != nil {
			return nil, fmt.Errorf("failed lenient decoding: %w", err)
		}
		p.Warnings = warnings
	}
	if errs := validatePolicy(p); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	if len(p.Rules) == 0 {
		return nil, errors.New("loaded illegal policy with 0 rules")
	}
	p.APIVersion, p.Kind = APIVersion, KindPolicy // apiVersion and kind may have been found case-insensitively
	return p, nil
}

// checkPolicyKind finds apiVersion and kind the way apimachinery does
// (case-insensitively), defaulting a missing kind to Policy.
func checkPolicyKind(js []byte) error {
	var tm struct {
		APIVersion string `json:"apiVersion,omitempty"`
		Kind       string `json:"kind,omitempty"`
	}
	if err := json.Unmarshal(js, &tm); err != nil {
		return fmt.Errorf("failed decoding: couldn't get version/kind; json parse error: %w", err)
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil {
		return fmt.Errorf("failed decoding: %w", err)
	}
	kind := tm.Kind
	if kind == "" {
		kind = KindPolicy
	}
	// Upstream decodes into the version named (or, without apiVersion, its
	// internal version) and then converts to the internal Policy.
	otherKind := kind == KindEvent || kind == "EventList" || kind == "PolicyList"
	switch {
	case gv.Empty() && kind == KindPolicy:
		return fmt.Errorf("unknown group version field audit.k8s.io/__internal, Kind=%s in policy", kind)
	case (gv.Empty() || gv == policyGV) && otherKind:
		v := "v1"
		if gv.Empty() {
			v = "audit"
		}
		return fmt.Errorf("failed decoding: converting (%s.%s) to (audit.Policy): unknown conversion", v, kind)
	case gv.Empty():
		return fmt.Errorf("failed decoding: no kind %q is registered for the internal version of group %q", kind, policyGV.Group)
	case gv != policyGV || kind != KindPolicy:
		return fmt.Errorf("failed decoding: no kind %q is registered for version %q", kind, gv.String())
	}
	return nil
}

func validatePolicy(p *Policy) field.ErrorList {
	errs := validateOmitStages(p.OmitStages, field.NewPath("omitStages"))
	rulesPath := field.NewPath("rules")
	for i, r := range p.Rules {
		errs = append(errs, validateRule(r, rulesPath.Index(i))...)
	}
	return errs
}

func validateRule(r PolicyRule, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch r.Level {
	case LevelNone, LevelMetadata, LevelRequest, LevelRequestResponse:
	case "":
		errs = append(errs, field.Required(path.Child("level"), ""))
	default:
		errs = append(errs, field.NotSupported(path.Child("level"), r.Level,
			[]Level{LevelNone, LevelMetadata, LevelRequest, LevelRequestResponse}))
	}
	for i, u := range r.NonResourceURLs {
		if u == "*" {
			continue
		}
		p := path.Child("nonResourceURLs").Index(i)
		if !strings.HasPrefix(u, "/") {
			errs = append(errs, field.Invalid(p, u, "non-resource URL rules must begin with a '/' character"))
		}
		if u != "" && strings.ContainsRune(u[:len(u)-1], '*') {
			errs = append(errs, field.Invalid(p, u, "non-resource URL wildcards '*' must be the final character of the rule"))
		}
	}
	for _, gr := range r.Resources {
		// The path has no index, as upstream.
		if gr.Group != "" && gr.Group != "*" {
			if msgs := apivalidation.NameIsDNSSubdomain(gr.Group, false); len(msgs) > 0 {
				errs = append(errs, field.Invalid(path.Child("resources").Child("group"), gr.Group, strings.Join(msgs, ",")))
			}
		}
		if len(gr.ResourceNames) > 0 && len(gr.Resources) == 0 {
			errs = append(errs, field.Invalid(path.Child("resources").Child("resourceNames"), gr.ResourceNames,
				"using resourceNames requires at least one resource"))
		}
	}
	errs = append(errs, validateOmitStages(r.OmitStages, path.Child("omitStages"))...)
	if len(r.NonResourceURLs) > 0 && (len(r.Resources) > 0 || len(r.Namespaces) > 0) {
		errs = append(errs, field.Invalid(path.Child("nonResourceURLs"), r.NonResourceURLs,
			"rules cannot apply to both regular resources and non-resource URLs"))
	}
	return errs
}

func validateOmitStages(stages []Stage, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, s := range stages {
		if !slices.Contains(allStages, s) {
			errs = append(errs, field.Invalid(path.Index(i), string(s),
				"allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic"))
		}
	}
	return errs
}
