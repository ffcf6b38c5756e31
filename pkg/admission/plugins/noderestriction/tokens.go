package noderestriction

import (
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/admitd/admitd/pkg/admission"
)

// admitServiceAccount lets a node request a service-account token only
// when it is bound to a pod on the node, for an audience the pod uses or
// the node is authorized for.
func (r *request) admitServiceAccount() error {
	if r.a.Operation != admission.Create || r.a.Subresource != "token" {
		return nil
	}
	tr, ok := r.a.Object.(*authenticationv1.TokenRequest)
	if !ok {
		return unexpectedType(r.a, r.a.Object)
	}
	ref := tr.Spec.BoundObjectRef
	if ref == nil || ref.APIVersion != "v1" || ref.Kind != "Pod" || ref.Name == "" {
		return forbidden(r.a, "node requested token not bound to a pod")
	}
	if ref.UID == "" {
		return forbidden(r.a, "node requested token with a pod binding without a uid")
	}
	pod, err := get[*corev1.Pod](r, podGetter, r.a.Namespace, ref.Name)
	if apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		return admission.NewForbidden(r.a, err)
	}
	if ref.UID != pod.UID {
		return forbidden(r.a, "the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID)
	}
	if pod.Spec.NodeName != r.node {
		return forbidden(r.a, "node requested token bound to a pod scheduled on a different node")
	}
	if err := r.checkAudience(tr.Spec.Audiences, pod); err != nil {
		return admission.NewForbidden(r.a, err)
	}
	return nil
}

// checkAudience allows at most one audience (none is the empty one): one
// the pod uses, or one the node may request for the service account.
func (r *request) checkAudience(audiences []string, pod *corev1.Pod) error {
	var audience string
	switch len(audiences) {
	case 0:
	case 1:
		audience = audiences[0]
	default:
		return fmt.Errorf("node may only request 0 or 1 audiences")
	}
	used, err := r.podUsesAudience(pod, audience)
	if err != nil {
		return fmt.Errorf("error validating audience %q: %w", audience, err)
	}
	if used {
		return nil
	}
	// The request is on the service account: its name is the request name.
	d, _, err := r.p.authz.Authorize(r.ctx, r.authorizationAttributes("request-serviceaccounts-token-audience", audience, r.a.Name))
	if d == admission.AuthorizationAllow {
		return nil
	}
	user := r.a.UserInfo.Username
	if err != nil {
		return fmt.Errorf("error authorizing %s to request tokens for audience %q: %w", user, audience, err)
	}
	return fmt.Errorf("%s is not authorized to request tokens for audience %q", user, audience)
}

// authorizationAttributes is the check of verb on resource and name in the
// request's namespace, API group and version.
func (r *request) authorizationAttributes(verb, resource, name string) admission.AuthorizationAttributes {
	return admission.AuthorizationAttributes{
		User: r.a.UserInfo, Verb: verb, ResourceRequest: true,
		APIGroup: r.a.Resource.Group, APIVersion: r.a.Resource.Version,
		Resource: resource, Namespace: r.a.Namespace, Name: name,
	}
}
