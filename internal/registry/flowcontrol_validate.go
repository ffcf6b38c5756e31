package registry

import (
	"fmt"
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
)

// Validation of FlowSchemas, with upstream's paths, types and messages
// (pkg/apis/flowcontrol/validation). Metadata is checked generically
// (pipeline.go); a create and an update run the same checks, status
// included; a status write checks the status only.
//
// The mandatory schemas "exempt" and "catch-all" must keep the spec of
// the bootstrap configuration (k8s.io/apiserver's flowcontrol/bootstrap),
// which kube-apiserver reports, like every whole spec it shows in an error,
// as its internal Go struct renders in JSON (internalJSON).

var (
	supportedVerbs          = []string{"create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"}
	supportedSubjectKinds   = []string{"Group", "ServiceAccount", "User"}
	supportedDistinguishers = []string{"ByNamespace", "ByUser"}
)

const namespaceIntro = "each member of this list must be '*' or a DNS-1123 label; "

func validateFlowSchema(fs *flowcontrolv1.FlowSchema) field.ErrorList {
	errs := validateFlowSchemaSpec(fs.Name, &fs.Spec)
	for _, m := range bootstrap.MandatoryFlowSchemas {
		if m.Name == fs.Name && !equality.Semantic.DeepEqual(fs.Spec, m.Spec) {
			errs = append(errs, field.Invalid(specPath, internalJSON(fs.Spec), fmt.Sprintf("spec of '%s' must equal the fixed value", fs.Name)))
		}
	}
	return append(errs, validateFlowSchemaStatus(fs.Status)...)
}

func validateFlowSchemaSpec(name string, spec *flowcontrolv1.FlowSchemaSpec) field.ErrorList {
	var errs field.ErrorList
	precedence := specPath.Child("matchingPrecedence")
	if spec.MatchingPrecedence <= 0 {
		errs = append(errs, field.Invalid(precedence, spec.MatchingPrecedence, "must be a positive value"))
	}
	if spec.MatchingPrecedence > flowcontrolv1.FlowSchemaMaxMatchingPrecedence {
		errs = append(errs, field.Invalid(precedence, spec.MatchingPrecedence,
			fmt.Sprintf("must not be greater than %d", flowcontrolv1.FlowSchemaMaxMatchingPrecedence)))
	}
	if spec.MatchingPrecedence == 1 && name != flowcontrolv1.FlowSchemaNameExempt {
		errs = append(errs, field.Invalid(precedence, spec.MatchingPrecedence, "only the schema named 'exempt' may have matchingPrecedence 1"))
	}
	if d := spec.DistinguisherMethod; d != nil && !slices.Contains(supportedDistinguishers, string(d.Type)) {
		errs = append(errs, field.NotSupported(specPath.Child("distinguisherMethod", "type"), internalJSON(d), supportedDistinguishers))
	}
	level := specPath.Child("priorityLevelConfiguration", "name")
	if pl := spec.PriorityLevelConfiguration.Name; pl == "" {
		errs = append(errs, field.Required(level, "must reference a priority level"))
	} else {
		for _, msg := range apivalidation.NameIsDNSSubdomain(pl, false) {
			errs = append(errs, field.Invalid(level, pl, msg))
		}
	}
	for i := range spec.Rules {
		errs = append(errs, validatePolicyRules(&spec.Rules[i], specPath.Child("rules").Index(i))...)
	}
	return errs
}

func validatePolicyRules(rule *flowcontrolv1.PolicyRulesWithSubjects, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(rule.Subjects) == 0 {
		errs = append(errs, field.Required(path.Child("subjects"), "subjects must contain at least one value"))
	}
	for i := range rule.Subjects {
		errs = append(errs, validateSubject(&rule.Subjects[i], path.Child("subjects").Index(i))...)
	}
	if len(rule.ResourceRules) == 0 && len(rule.NonResourceRules) == 0 {
		errs = append(errs, field.Required(path, "at least one of resourceRules and nonResourceRules has to be non-empty"))
	}
	for i := range rule.ResourceRules {
		errs = append(errs, validateResourceRule(&rule.ResourceRules[i], path.Child("resourceRules").Index(i))...)
	}
	for i := range rule.NonResourceRules {
		errs = append(errs, validateNonResourceRule(&rule.NonResourceRules[i], path.Child("nonResourceRules").Index(i))...)
	}
	return errs
}

// validateSubject: a subject names exactly the member its kind calls for,
// with a name (and a namespace for a service account).
func validateSubject(s *flowcontrolv1.Subject, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	forbid := func(member string, set bool, kind string) {
		if set {
			errs = append(errs, field.Forbidden(path.Child(member), fmt.Sprintf("%s is forbidden when subject kind is not '%s'", member, kind)))
		}
	}
	switch s.Kind {
	case flowcontrolv1.SubjectKindServiceAccount:
		errs = append(errs, validateServiceAccountSubject(s.ServiceAccount, path.Child("serviceAccount"))...)
		forbid("user", s.User != nil, "User")
		forbid("group", s.Group != nil, "Group")
	case flowcontrolv1.SubjectKindUser:
		var name *string
		if s.User != nil {
			name = &s.User.Name
		}
		errs = append(errs, namedSubject("user", "User", name, path.Child("user"))...)
		forbid("serviceAccount", s.ServiceAccount != nil, "ServiceAccount")
		forbid("group", s.Group != nil, "Group")
	case flowcontrolv1.SubjectKindGroup:
		var name *string
		if s.Group != nil {
			name = &s.Group.Name
		}
		errs = append(errs, namedSubject("group", "Group", name, path.Child("group"))...)
		forbid("serviceAccount", s.ServiceAccount != nil, "ServiceAccount")
		forbid("user", s.User != nil, "User")
	default:
		errs = append(errs, field.NotSupported(path.Child("kind"), s.Kind, supportedSubjectKinds))
	}
	return errs
}

// namedSubject checks a User or Group subject (name is nil when the
// member is missing).
func namedSubject(member, kind string, name *string, path *field.Path) field.ErrorList {
	switch {
	case name == nil:
		return field.ErrorList{field.Required(path, fmt.Sprintf("%s is required when subject kind is '%s'", member, kind))}
	case *name == "":
		return field.ErrorList{field.Required(path.Child("name"), "")}
	}
	return nil
}

func validateServiceAccountSubject(sa *flowcontrolv1.ServiceAccountSubject, path *field.Path) field.ErrorList {
	if sa == nil {
		return field.ErrorList{field.Required(path, "serviceAccount is required when subject kind is 'ServiceAccount'")}
	}
	var errs field.ErrorList
	switch {
	case sa.Name == "":
		errs = append(errs, field.Required(path.Child("name"), ""))
	case sa.Name != flowcontrolv1.NameAll:
		for _, msg := range apivalidation.ValidateServiceAccountName(sa.Name, false) {
			errs = append(errs, field.Invalid(path.Child("name"), sa.Name, msg))
		}
	}
	if sa.Namespace == "" {
		return append(errs, field.Required(path.Child("namespace"), "must specify namespace for service account"))
	}
	for _, msg := range apivalidation.ValidateNamespaceName(sa.Namespace, false) {
		errs = append(errs, field.Invalid(path.Child("namespace"), sa.Namespace, msg))
	}
	return errs
}

// validateVerbs: some verbs, either "*" alone or verbs a request can have.
func validateVerbs(verbs []string, path *field.Path) *field.Error {
	switch {
	case len(verbs) == 0:
		return field.Required(path, "verbs must contain at least one value")
	case slices.Contains(verbs, "*"):
		if len(verbs) > 1 {
			return field.Invalid(path, verbs, "if '*' is present, must not specify other verbs")
		}
	default:
		for _, v := range verbs {
			if !slices.Contains(supportedVerbs, v) {
				return field.NotSupported(path, verbs, supportedVerbs)
			}
		}
	}
	return nil
}

func validateResourceRule(rule *flowcontrolv1.ResourcePolicyRule, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if err := validateVerbs(rule.Verbs, path.Child("verbs")); err != nil {
		errs = append(errs, err)
	}
	for _, l := range []struct {
		name, what string
		list       []string
	}{{"apiGroups", "api group", rule.APIGroups}, {"resources", "resource", rule.Resources}} {
		switch {
		case len(l.list) == 0:
			errs = append(errs, field.Required(path.Child(l.name), "resource rules must supply at least one "+l.what))
		case len(l.list) > 1 && slices.Contains(l.list, "*"):
			errs = append(errs, field.Invalid(path.Child(l.name), l.list, "if '*' is present, must not specify other "+l.what+"s"))
		}
	}
	namespaces := path.Child("namespaces")
	switch {
	case len(rule.Namespaces) == 0 && !rule.ClusterScope:
		errs = append(errs, field.Required(namespaces, "resource rules that are not cluster scoped must supply at least one namespace"))
	case slices.Contains(rule.Namespaces, "*"):
		if len(rule.Namespaces) > 1 {
			errs = append(errs, field.Invalid(namespaces, rule.Namespaces, "if '*' is present, must not specify other namespaces"))
		}
	default:
		for i, ns := range rule.Namespaces {
			for _, msg := range apivalidation.ValidateNamespaceName(ns, false) {
				errs = append(errs, field.Invalid(namespaces.Index(i), ns, namespaceIntro+msg))
			}
		}
	}
	return errs
}

func validateNonResourceRule(rule *flowcontrolv1.NonResourcePolicyRule, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if err := validateVerbs(rule.Verbs, path.Child("verbs")); err != nil {
		errs = append(errs, err)
	}
	urls := path.Child("nonResourceURLs")
	switch {
	case len(rule.NonResourceURLs) == 0:
		errs = append(errs, field.Required(urls, "nonResourceURLs must contain at least one value"))
	case slices.Contains(rule.NonResourceURLs, "*"):
		if len(rule.NonResourceURLs) > 1 {
			errs = append(errs, field.Invalid(urls, rule.NonResourceURLs, "if '*' is present, must not specify other non-resource URLs"))
		}
	default:
		for i, u := range rule.NonResourceURLs {
			if msg := nonResourceURLProblem(u); msg != "" {
				errs = append(errs, field.Invalid(urls.Index(i), u, msg))
			}
		}
	}
	return errs
}

// nonResourceURLProblem says what is wrong with a non-resource URL a
// schema matches ("" when nothing): "/" or a slash-led path without
// blanks or empty segments, whose only "*" may end it as "/*".
func nonResourceURLProblem(u string) string {
	switch {
	case u == "":
		return "must not be empty"
	case u == "/":
		return ""
	case !strings.HasPrefix(u, "/"):
		return "must start with slash"
	case strings.Contains(u, " "):
		return "must not contain white-space"
	case strings.Contains(u, "//"):
		return "must not contain double slash"
	}
	if n := strings.Count(u, "*"); n > 1 || n == 1 && !strings.HasSuffix(u, "/*") {
		return "wildcard can only do suffix matching"
	}
	return ""
}

func validateFlowSchemaStatus(st flowcontrolv1.FlowSchemaStatus) field.ErrorList {
	types := make([]string, len(st.Conditions))
	for i, c := range st.Conditions {
		types[i] = string(c.Type)
	}
	return validateConditionTypes(types, func(i int) any { return st.Conditions[i].Type })
}

// validateConditionTypes: every condition has a type, and no two the
// same. value shows condition i's type as upstream does (its Go type).
func validateConditionTypes(types []string, value func(i int) any) field.ErrorList {
	var errs field.ErrorList
	conditions := field.NewPath("status", "conditions")
	for i, t := range types {
		if slices.Contains(types[:i], t) {
			errs = append(errs, field.Duplicate(conditions.Index(i).Child("type"), value(i)))
		}
		if t == "" {
			errs = append(errs, field.Required(conditions.Index(i).Child("type"), ""))
		}
	}
	return errs
}
