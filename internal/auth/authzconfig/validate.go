package authzconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	api "k8s.io/apiserver/pkg/apis/apiserver"

	"github.com/admitd/admitd/internal/auth/authzwebhook"
)

// The authorizer types a configuration may name, as kube-apiserver's; only
// Webhook may appear more than once.
var (
	knownTypes = []string{"ABAC", "AlwaysAllow", "AlwaysDeny", "Node", "RBAC", "Webhook"}
	// unsupportedTypes are known to kube-apiserver, not served by admitd.
	unsupportedTypes = []string{"ABAC"}
)

// maxTimeout bounds a webhook's timeout, as upstream.
const maxTimeout = 30 * time.Second

// Validate checks c with upstream's rules and messages, then refuses what
// admitd does not serve (ABAC).
func Validate(c *api.AuthorizationConfiguration) error {
	return validate(c).ToAggregate()
}

func validate(c *api.AuthorizationConfiguration) field.ErrorList {
	var errs field.ErrorList
	if len(c.Authorizers) == 0 {
		errs = append(errs, field.Required(field.NewPath("authorizers"), "at least one authorization mode must be defined"))
	}
	seenTypes, seenNames := map[string]bool{}, map[string]bool{}
	for i, a := range c.Authorizers {
		p := field.NewPath("authorizers").Index(i)
		t := string(a.Type)
		switch {
		case t == "":
			errs = append(errs, field.Required(p.Child("type"), ""))
			continue
		case !slices.Contains(knownTypes, t):
			errs = append(errs, field.NotSupported(p.Child("type"), t, knownTypes))
			continue
		case seenTypes[t] && a.Type != api.TypeWebhook:
			errs = append(errs, field.Duplicate(p.Child("type"), t))
			continue
		case slices.Contains(unsupportedTypes, t):
			errs = append(errs, field.Invalid(p.Child("type"), t, "not implemented by admitd yet"))
		}
		seenTypes[t] = true
		errs = append(errs, validateName(p.Child("name"), a.Name, seenNames)...)
		seenNames[a.Name] = true
		switch {
		case a.Type == api.TypeWebhook && a.Webhook == nil:
			errs = append(errs, field.Required(p.Child("webhook"), "required when type=Webhook"))
		case a.Type == api.TypeWebhook:
			errs = append(errs, validateWebhook(p, a.Webhook)...)
		case a.Webhook != nil:
			errs = append(errs, field.Invalid(p.Child("webhook"), "non-null", "may only be specified when type=Webhook"))
		}
	}
	return errs
}

func validateName(p *field.Path, name string, seen map[string]bool) field.ErrorList {
	switch {
	case name == "":
		return field.ErrorList{field.Required(p, "")}
	case seen[name]:
		return field.ErrorList{field.Duplicate(p, name)}
	}
	if msgs := utilvalidation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(p, name, "authorizer name is invalid: "+strings.Join(msgs, ", "))}
	}
	return nil
}

// validateWebhook checks a webhook's settings; p is the authorizer's path,
// as upstream reports them (authorizers[i].timeout, not
// authorizers[i].webhook.timeout).
func validateWebhook(p *field.Path, w *api.WebhookConfiguration) field.ErrorList {
	errs := validateDurations(p, w)
	switch w.SubjectAccessReviewVersion {
	case "":
		errs = append(errs, field.Required(p.Child("subjectAccessReviewVersion"), ""))
	case "v1", "v1beta1":
	default:
		errs = append(errs, field.NotSupported(p.Child("subjectAccessReviewVersion"), w.SubjectAccessReviewVersion, []string{"v1", "v1beta1"}))
	}
	switch w.MatchConditionSubjectAccessReviewVersion {
	case "":
		if len(w.MatchConditions) > 0 {
			errs = append(errs, field.Required(p.Child("matchConditionSubjectAccessReviewVersion"), "required if match conditions are specified"))
		}
	case "v1":
	default:
		errs = append(errs, field.NotSupported(p.Child("matchConditionSubjectAccessReviewVersion"), w.MatchConditionSubjectAccessReviewVersion, []string{"v1"}))
	}
	switch w.FailurePolicy {
	case "":
		errs = append(errs, field.Required(p.Child("failurePolicy"), ""))
	case api.FailurePolicyNoOpinion, api.FailurePolicyDeny:
	default:
		errs = append(errs, field.NotSupported(p.Child("failurePolicy"), w.FailurePolicy, []string{"NoOpinion", "Deny"}))
	}
	errs = append(errs, validateConnection(p.Child("connectionInfo"), w.ConnectionInfo)...)
	return append(errs, validateMatchConditions(p, w.MatchConditions)...)
}

// maxMatchConditions bounds a webhook's matchConditions, as upstream.
const maxMatchConditions = 64

// validateMatchConditions checks that each expression is set, unique and
// compiles to a bool over request.
func validateMatchConditions(p *field.Path, conds []api.WebhookMatchCondition) field.ErrorList {
	if len(conds) > maxMatchConditions {
		return field.ErrorList{field.TooMany(p.Child("matchConditions"), len(conds), maxMatchConditions)}
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, c := range conds {
		ep := p.Child("matchConditions").Index(i).Child("expression")
		switch {
		case strings.TrimSpace(c.Expression) == "":
			errs = append(errs, field.Required(ep, ""))
			continue
		case seen[c.Expression]:
			errs = append(errs, field.Duplicate(ep, c.Expression))
			continue
		}
		seen[c.Expression] = true
		if _, err := authzwebhook.CompileMatchCondition(c.Expression); err != nil {
			errs = append(errs, field.Invalid(ep, c.Expression, err.Error()))
		}
	}
	return errs
}

// Expressions are the expressions of conds, in order.
func Expressions(conds []api.WebhookMatchCondition) []string {
	out := make([]string, len(conds))
	for i, c := range conds {
		out[i] = c.Expression
	}
	return out
}

func validateDurations(p *field.Path, w *api.WebhookConfiguration) field.ErrorList {
	var errs field.ErrorList
	switch d := w.Timeout.Duration; {
	case d == 0:
		errs = append(errs, field.Required(p.Child("timeout"), ""))
	case d < 0 || d > maxTimeout:
		errs = append(errs, field.Invalid(p.Child("timeout"), d.String(), "must be > 0s and <= 30s"))
	}
	for _, ttl := range []struct {
		name string
		d    time.Duration
	}{{"authorizedTTL", w.AuthorizedTTL.Duration}, {"unauthorizedTTL", w.UnauthorizedTTL.Duration}} {
		switch {
		case ttl.d == 0:
			errs = append(errs, field.Required(p.Child(ttl.name), ""))
		case ttl.d < 0:
			errs = append(errs, field.Invalid(p.Child(ttl.name), ttl.d.String(), "must be > 0s"))
		}
	}
	return errs
}

func validateConnection(p *field.Path, c api.WebhookConnectionInfo) field.ErrorList {
	file := p.Child("kubeConfigFile")
	switch c.Type {
	case "":
		return field.ErrorList{field.Required(p.Child("type"), "")}
	case api.AuthorizationWebhookConnectionInfoTypeInCluster:
		if c.KubeConfigFile != nil {
			return field.ErrorList{field.Invalid(file, *c.KubeConfigFile, "can only be set when type=KubeConfigFile")}
		}
		return nil
	case api.AuthorizationWebhookConnectionInfoTypeKubeConfigFile:
	default:
		return field.ErrorList{field.NotSupported(p.Child("type"), c,
			[]string{api.AuthorizationWebhookConnectionInfoTypeInCluster, api.AuthorizationWebhookConnectionInfoTypeKubeConfigFile})}
	}
	if c.KubeConfigFile == nil || *c.KubeConfigFile == "" {
		return field.ErrorList{field.Required(file, "")}
	}
	path := *c.KubeConfigFile
	if !filepath.IsAbs(path) {
		return field.ErrorList{field.Invalid(file, path, "must be an absolute path")}
	}
	info, err := os.Stat(path)
	if err != nil {
		return field.ErrorList{field.Invalid(file, path, fmt.Sprintf("error loading file: %v", err))}
	}
	if !info.Mode().IsRegular() {
		return field.ErrorList{field.Invalid(file, path, "must be a regular file")}
	}
	return nil
}
