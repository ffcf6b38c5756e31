package audit

import (
	"slices"
	"strings"
)

// Attributes are what a policy rule is matched against: the authorizer
// attributes of the request, with the authenticated (not impersonated) user.
type Attributes struct {
	// User is the user name; "" means no authenticated user, which no
	// users rule matches.
	User   string
	Groups []string
	Verb   string
	// ResourceRequest is true for /api and /apis requests naming a
	// resource; the fields below it apply to those only.
	ResourceRequest bool
	APIGroup        string
	Resource        string
	Subresource     string
	// Namespace is "" for cluster-scoped resources.
	Namespace string
	// Name is "" for list, create and deletecollection.
	Name string
	// Path is the URL path, matched by nonResourceURLs.
	Path string
}

// RequestConfig is what the policy decided for one request.
type RequestConfig struct {
	Level Level
	// OmitStages is the union of the policy's and the rule's omitStages.
	OmitStages []Stage
	// OmitManagedFields drops metadata.managedFields from logged bodies.
	OmitManagedFields bool
}

// Omits reports whether events of stage are not written.
func (c RequestConfig) Omits(stage Stage) bool { return slices.Contains(c.OmitStages, stage) }

// Evaluate returns the level and stages of the first rule matching a, or
// level None (with the policy's omitStages) when none does. A nil policy
// audits nothing.
func (p *Policy) Evaluate(a Attributes) RequestConfig {
	if p == nil {
		return RequestConfig{Level: LevelNone}
	}
	for i := range p.Rules {
		r := &p.Rules[i]
		if !ruleMatches(r, &a) {
			continue
		}
		omf := p.OmitManagedFields
		if r.OmitManagedFields != nil {
			omf = *r.OmitManagedFields
		}
		return RequestConfig{Level: r.Level, OmitStages: unionStages(p.OmitStages, r.OmitStages), OmitManagedFields: omf}
	}
	return RequestConfig{Level: LevelNone, OmitStages: unionStages(p.OmitStages), OmitManagedFields: p.OmitManagedFields}
}

// unionStages returns the stages present in any list, in stage order.
func unionStages(lists ...[]Stage) []Stage {
	var out []Stage
	for _, s := range allStages {
		for _, l := range lists {
			if slices.Contains(l, s) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

func ruleMatches(r *PolicyRule, a *Attributes) bool {
	if len(r.Users) > 0 && (a.User == "" || !slices.Contains(r.Users, a.User)) {
		return false
	}
	if len(r.UserGroups) > 0 && !slices.ContainsFunc(a.Groups, func(g string) bool { return slices.Contains(r.UserGroups, g) }) {
		return false
	}
	if len(r.Verbs) > 0 && !slices.Contains(r.Verbs, a.Verb) {
		return false
	}
	if len(r.Namespaces) > 0 || len(r.Resources) > 0 {
		return ruleMatchesResource(r, a)
	}
	if len(r.NonResourceURLs) > 0 {
		return !a.ResourceRequest && slices.ContainsFunc(r.NonResourceURLs, func(spec string) bool { return pathMatches(a.Path, spec) })
	}
	return true
}

// pathMatches matches "*", an exact path, or a prefix ending in "*".
func pathMatches(path, spec string) bool {
	if spec == "*" || spec == path {
		return true
	}
	// TrimRight, as upstream: "/a**" is the prefix "/a".
	return strings.HasSuffix(spec, "*") && strings.HasPrefix(path, strings.TrimRight(spec, "*"))
}

func ruleMatchesResource(r *PolicyRule, a *Attributes) bool {
	if !a.ResourceRequest {
		return false
	}
	if len(r.Namespaces) > 0 && !slices.Contains(r.Namespaces, a.Namespace) {
		return false
	}
	if len(r.Resources) == 0 {
		return true
	}
	combined := a.Resource
	if a.Subresource != "" {
		combined = a.Resource + "/" + a.Subresource
	}
	for _, gr := range r.Resources {
		if gr.Group != a.APIGroup && gr.Group != "*" {
			continue
		}
		if len(gr.Resources) == 0 {
			return true
		}
		if len(gr.ResourceNames) > 0 && !slices.Contains(gr.ResourceNames, a.Name) {
			continue
		}
		for _, res := range gr.Resources {
			if resourceMatches(res, combined, a.Resource, a.Subresource) {
				return true
			}
		}
	}
	return false
}

// resourceMatches matches "*" (any resource and subresource), "pods" or
// "pods/log" exactly, "*/log" (that subresource of any resource) and
// "pods/*" (the resource itself and any of its subresources).
func resourceMatches(res, combined, resource, subresource string) bool {
	switch {
	case res == "*" || res == combined:
		return true
	case subresource != "" && strings.HasPrefix(res, "*/") && subresource == res[2:]:
		return true
	case strings.HasSuffix(res, "/*") && resource == strings.TrimSuffix(res, "/*"):
		return true
	}
	return false
}
