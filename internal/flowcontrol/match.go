// Package flowcontrol is API Priority and Fairness: every request is
// classified by the FlowSchemas into a priority level, whose seats it waits
// for in a fair queue (or is refused with 429) before it is served, as
// kube-apiserver's flow control does.
package flowcontrol

import (
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

// Digest is what classification reads of a request: who sends it and what
// it asks for.
type Digest struct {
	User   string
	Groups []string
	// IsResource: a resource request (Verb, APIGroup, Resource,
	// Subresource, Namespace, Name); otherwise a non-resource one (Verb,
	// Path).
	IsResource  bool
	Verb        string
	APIGroup    string
	Resource    string
	Subresource string
	Namespace   string
	Name        string
	Path        string
	// APIVersion is not classified by; the request dump shows it.
	APIVersion string
}

// matchesSchema: some rule of fs matches d.
func matchesSchema(d *Digest, fs *flowcontrolv1.FlowSchema) bool {
	for i := range fs.Spec.Rules {
		if matchesRule(d, &fs.Spec.Rules[i]) {
			return true
		}
	}
	return false
}

// matchesRule: a subject matches the requester and a rule of the request's
// sort (resource or non-resource) matches what it asks.
func matchesRule(d *Digest, rule *flowcontrolv1.PolicyRulesWithSubjects) bool {
	if !matchesSomeSubject(d, rule.Subjects) {
		return false
	}
	if d.IsResource {
		for i := range rule.ResourceRules {
			if matchesResourceRule(d, &rule.ResourceRules[i]) {
				return true
			}
		}
		return false
	}
	for i := range rule.NonResourceRules {
		if matchesNonResourceRule(d, &rule.NonResourceRules[i]) {
			return true
		}
	}
	return false
}

func matchesSomeSubject(d *Digest, subjects []flowcontrolv1.Subject) bool {
	for i := range subjects {
		if matchesSubject(d, &subjects[i]) {
			return true
		}
	}
	return false
}

func matchesSubject(d *Digest, s *flowcontrolv1.Subject) bool {
	switch s.Kind {
	case flowcontrolv1.SubjectKindUser:
		return s.User != nil && (s.User.Name == flowcontrolv1.NameAll || s.User.Name == d.User)
	case flowcontrolv1.SubjectKindGroup:
		if s.Group == nil {
			return false
		}
		if s.Group.Name == flowcontrolv1.NameAll {
			return true
		}
		for _, g := range d.Groups {
			if g == s.Group.Name {
				return true
			}
		}
		return false
	case flowcontrolv1.SubjectKindServiceAccount:
		if s.ServiceAccount == nil {
			return false
		}
		return matchesServiceAccount(s.ServiceAccount.Namespace, s.ServiceAccount.Name, d.User)
	}
	return false
}

const serviceAccountUserPrefix = "system:serviceaccount:"

// matchesServiceAccount: user is the service account namespace/name, or any
// account of namespace when name is "*". Like upstream, the namespace is
// compared as a prefix of the user name followed by a colon.
func matchesServiceAccount(namespace, name, user string) bool {
	rest, ok := strings.CutPrefix(user, serviceAccountUserPrefix)
	if !ok {
		return false
	}
	if name != flowcontrolv1.NameAll {
		return rest == namespace+":"+name
	}
	rest, ok = strings.CutPrefix(rest, namespace)
	return ok && strings.HasPrefix(rest, ":")
}

func matchesResourceRule(d *Digest, r *flowcontrolv1.ResourcePolicyRule) bool {
	resource := d.Resource
	if d.Subresource != "" {
		resource += "/" + d.Subresource
	}
	if !listHas(r.Verbs, d.Verb, flowcontrolv1.VerbAll) ||
		!listHas(r.Resources, resource, flowcontrolv1.ResourceAll) ||
		!listHas(r.APIGroups, d.APIGroup, flowcontrolv1.APIGroupAll) {
		return false
	}
	if d.Namespace == "" {
		return r.ClusterScope
	}
	return listHas(r.Namespaces, d.Namespace, flowcontrolv1.NamespaceEvery)
}

func matchesNonResourceRule(d *Digest, r *flowcontrolv1.NonResourcePolicyRule) bool {
	if !listHas(r.Verbs, d.Verb, flowcontrolv1.VerbAll) {
		return false
	}
	for _, u := range r.NonResourceURLs {
		if u == flowcontrolv1.NonResourceAll || u == d.Path {
			return true
		}
		// "/apis/*" and "/healthz" both match what lies under them.
		prefix := strings.TrimSuffix(u, "*")
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		if strings.HasPrefix(d.Path, prefix) {
			return true
		}
	}
	return false
}

// listHas: list is exactly [wildcard], or holds x.
func listHas(list []string, x, wildcard string) bool {
	if len(list) == 1 && list[0] == wildcard {
		return true
	}
	for _, y := range list {
		if y == x {
			return true
		}
	}
	return false
}

// distinguisher is the part of a flow's identity the schema's method takes
// from the request: the user, the namespace, or nothing.
func distinguisher(d *Digest, m *flowcontrolv1.FlowDistinguisherMethod) string {
	if m == nil {
		return ""
	}
	switch m.Type {
	case flowcontrolv1.FlowDistinguisherMethodByUserType:
		return d.User
	case flowcontrolv1.FlowDistinguisherMethodByNamespaceType:
		return d.Namespace
	}
	return ""
}
