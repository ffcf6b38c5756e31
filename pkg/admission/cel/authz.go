package cel

import (
	"context"
	"encoding/json"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/admitd/admitd/pkg/admission"
)

// authorizerAdapter lets the Kubernetes authz CEL library ask an
// admission.Authorizer.
type authorizerAdapter struct {
	authz admission.Authorizer
}

var _ authorizer.UnconditionalAuthorizer = authorizerAdapter{}

func (x authorizerAdapter) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	aa := admission.AuthorizationAttributes{
		User:            fromUserInfo(attrs.GetUser()),
		Verb:            attrs.GetVerb(),
		ResourceRequest: attrs.IsResourceRequest(),
		APIGroup:        attrs.GetAPIGroup(),
		APIVersion:      attrs.GetAPIVersion(),
		Resource:        attrs.GetResource(),
		Subresource:     attrs.GetSubresource(),
		Namespace:       attrs.GetNamespace(),
		Name:            attrs.GetName(),
		Path:            attrs.GetPath(),
	}
	aa.FieldSelector, aa.FieldSelectorParsingErr = attrs.GetFieldSelector()
	aa.LabelSelector, aa.LabelSelectorParsingErr = attrs.GetLabelSelector()
	d, reason, err := x.authz.Authorize(ctx, aa)
	return authorizer.Decision(d), reason, err
}

// userInfo is the requesting user in the form the authz library keeps.
func userInfo(u authenticationv1.UserInfo) user.Info {
	var extra map[string][]string
	if len(u.Extra) > 0 {
		extra = make(map[string][]string, len(u.Extra))
		for k, v := range u.Extra {
			extra[k] = []string(v)
		}
	}
	return &user.DefaultInfo{Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra}
}

func fromUserInfo(u user.Info) authenticationv1.UserInfo {
	if u == nil {
		return authenticationv1.UserInfo{}
	}
	out := authenticationv1.UserInfo{Username: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups()}
	if extra := u.GetExtra(); len(extra) > 0 {
		out.Extra = make(map[string]authenticationv1.ExtraValue, len(extra))
		for k, v := range extra {
			out.Extra[k] = authenticationv1.ExtraValue(v)
		}
	}
	return out
}

// requestResource presets authorizer.requestResource with the request's
// own resource, subresource, namespace and name.
type requestResource struct{ a *admission.Attributes }

func (r requestResource) GetName() string                          { return r.a.Name }
func (r requestResource) GetNamespace() string                     { return r.a.Namespace }
func (r requestResource) GetResource() schema.GroupVersionResource { return r.a.Resource }
func (r requestResource) GetSubresource() string                   { return r.a.Subresource }

// cachingAuthorizer remembers the decisions of one request, as upstream's
// per-request caching authorizer: the same check asked by several
// expressions, bindings or params reaches the authorizer once.
type cachingAuthorizer struct {
	next admission.Authorizer
	mu   sync.Mutex
	seen map[string]cachedDecision
}

type cachedDecision struct {
	d      admission.AuthorizationDecision
	reason string
	err    error
}

// NewCachingAuthorizer wraps a for the evaluations of one request. A nil a
// stays nil (the authorizer variable is then unbound).
func NewCachingAuthorizer(a admission.Authorizer) admission.Authorizer {
	if a == nil {
		return nil
	}
	return &cachingAuthorizer{next: a}
}

func (c *cachingAuthorizer) Authorize(ctx context.Context, a admission.AuthorizationAttributes) (admission.AuthorizationDecision, string, error) {
	key := authorizationKey(a)
	c.mu.Lock()
	r, ok := c.seen[key]
	c.mu.Unlock()
	if ok {
		return r.d, r.reason, r.err
	}
	r.d, r.reason, r.err = c.next.Authorize(ctx, a)
	c.mu.Lock()
	if c.seen == nil {
		c.seen = map[string]cachedDecision{}
	}
	c.seen[key] = r
	c.mu.Unlock()
	return r.d, r.reason, r.err
}

// authorizationKey identifies a check; a selector that failed to parse is
// not part of it (the check then ignores the selector).
func authorizationKey(a admission.AuthorizationAttributes) string {
	k := struct {
		User                                    authenticationv1.UserInfo
		Verb, Group, Version, Resource, Sub, NS string
		Name, Path                              string
		ResourceRequest                         bool
		Fields, Labels                          string
	}{User: a.User, Verb: a.Verb, Group: a.APIGroup, Version: a.APIVersion, Resource: a.Resource, Sub: a.Subresource,
		NS: a.Namespace, Name: a.Name, Path: a.Path, ResourceRequest: a.ResourceRequest}
	if len(a.FieldSelector) > 0 && a.FieldSelectorParsingErr == nil {
		f, _ := json.Marshal(a.FieldSelector)
		k.Fields = string(f)
	}
	if len(a.LabelSelector) > 0 && a.LabelSelectorParsingErr == nil {
		k.Labels = a.LabelSelector.String()
	}
	b, _ := json.Marshal(k)
	return string(b)
}
