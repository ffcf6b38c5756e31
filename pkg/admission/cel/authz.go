package cel

import (
	"context"

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
