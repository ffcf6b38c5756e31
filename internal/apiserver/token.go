package apiserver

import (
	"context"
	"fmt"
	"slices"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/serviceaccount"
)

// Token requests, as upstream's TokenREST
// (pkg/registry/core/serviceaccount/storage/token.go): a signed JWT for the
// service account, optionally bound to a pod, secret or node. Tokens bound
// to webhook configurations (an alpha feature) are not supported.

var tokenRequestKind = authenticationv1.SchemeGroupVersion.WithKind("TokenRequest")

// defaultTokenRequest is the defaulting of decoding (SetDefaults): one hour.
func defaultTokenRequest(obj runtime.Object) {
	if req, ok := obj.(*authenticationv1.TokenRequest); ok && req.Spec.ExpirationSeconds == nil {
		hour := int64(60 * 60)
		req.Spec.ExpirationSeconds = &hour
	}
}

func createToken(ctx context.Context, c *subCreateCall) (runtime.Object, error) {
	req, ok := c.obj.(*authenticationv1.TokenRequest)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a TokenRequest object: %T", c.obj))
	}
	s, ns, name := c.s, c.rq.info.Namespace, c.name
	if err := checkTokenRequestNames(req, ns, name); err != nil {
		return nil, err
	}
	saRes, _ := s.cat.Lookup(corev1.SchemeGroupVersion.WithResource("serviceaccounts"))
	obj, err := s.getObject(ctx, saRes, ns, name)
	if err != nil {
		return nil, err
	}
	sa := obj.(*corev1.ServiceAccount)
	if err := checkTokenRequestUID(c, saRes, req, sa); err != nil {
		return nil, err
	}
	issuer := s.tokens
	if len(req.Spec.Audiences) == 0 {
		req.Spec.Audiences = issuer.Audiences
	}
	if req.Name == "" {
		req.Name = sa.Name
	}
	if req.Namespace == "" {
		req.Namespace = sa.Namespace
	}
	if req.UID == "" {
		req.UID = sa.UID
	}
	now := s.cfg.Now()
	req.CreationTimestamp = metav1.NewTime(now.Truncate(time.Second))
	req.Status = authenticationv1.TokenRequestStatus{}
	defaultTokenRequest(req)
	if errs := validateTokenRequest(req); len(errs) > 0 {
		return nil, apierrors.NewInvalid(tokenRequestKind.GroupKind(), "", errs)
	}
	if err := c.validate(ctx, req.DeepCopy()); err != nil {
		return nil, err
	}
	bound, err := s.boundObjects(ctx, ns, name, req.Spec.BoundObjectRef)
	if err != nil {
		return nil, err
	}
	return s.issueToken(c, req, sa, bound, now)
}

func checkTokenRequestNames(req *authenticationv1.TokenRequest, ns, name string) error {
	if req.Name != "" && req.Name != name {
		return apierrors.NewInvalid(tokenRequestKind.GroupKind(), name, field.ErrorList{
			field.Invalid(field.NewPath("metadata").Child("name"), req.Name, "must match the service account name if specified")})
	}
	if req.Namespace != "" && req.Namespace != ns {
		return apierrors.NewInvalid(tokenRequestKind.GroupKind(), name, field.ErrorList{
			field.Invalid(field.NewPath("metadata").Child("namespace"), req.Namespace, "must match the service account namespace if specified")})
	}
	return nil
}

// checkTokenRequestUID refuses a token request whose uid is not its service
// account's (409), as kube-apiserver 1.37 with TokenRequestServiceAccountUIDValidation
// (on by default); with the gate off it is served, with an audit annotation
// and a warning.
func checkTokenRequestUID(c *subCreateCall, saRes *registry.Resource, req *authenticationv1.TokenRequest, sa *corev1.ServiceAccount) error {
	if req.UID == "" || req.UID == sa.UID {
		return nil
	}
	if saRes.FeatureEnabled("TokenRequestServiceAccountUIDValidation") {
		return apierrors.NewConflict(schema.GroupResource{Group: tokenRequestKind.Group, Resource: tokenRequestKind.Kind}, c.name,
			fmt.Errorf("the UID in the token request (%s) does not match the UID of the service account (%s)", req.UID, sa.UID))
	}
	_ = c.rq.record.AddAnnotation("authentication.k8s.io/token-request-uid-mismatch",
		fmt.Sprintf("the UID in the token request (%s) does not match the UID of the service account (%s)", req.UID, sa.UID))
	c.rq.record.AddWarning(fmt.Sprintf("the UID in the token request (%s) does not match the UID of the service account (%s) but TokenRequestServiceAccountUIDValidation is not enabled. In the future, this will return a conflict error", req.UID, sa.UID))
	return nil
}

// validateTokenRequest is upstream's ValidateTokenRequest.
func validateTokenRequest(req *authenticationv1.TokenRequest) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec", "expirationSeconds")
	exp := *req.Spec.ExpirationSeconds
	if exp < 10*60 {
		errs = append(errs, field.Invalid(p, exp, "may not specify a duration less than 10 minutes"))
	}
	if exp > 1<<32 {
		errs = append(errs, field.Invalid(p, exp, "may not specify a duration larger than 2^32 seconds"))
	}
	return errs
}

// issueToken signs the token and fills the status. An expiration beyond
// the issuer's maximum is shortened to it, with a warning; a pod-bound
// token asking for kubelet's 3607 seconds gets upstream's extended
// expiration.
func (s *Server) issueToken(c *subCreateCall, req *authenticationv1.TokenRequest, sa *corev1.ServiceAccount, bound serviceaccount.Bound, now time.Time) (runtime.Object, error) {
	if limit := s.tokens.MaxExpirationSeconds; limit > 0 && *req.Spec.ExpirationSeconds > limit {
		c.rq.record.AddWarning(fmt.Sprintf("requested expiration of %d seconds shortened to %d seconds", *req.Spec.ExpirationSeconds, limit))
		req.Spec.ExpirationSeconds = &limit
	}
	exp := *req.Spec.ExpirationSeconds
	var warnAfter int64
	if !s.tokens.NoExtendedExpiration && bound.Pod != nil && exp == serviceaccount.WarnOnlyBoundTokenExpirationSeconds && isSubset(req.Spec.Audiences, s.tokens.Audiences) {
		warnAfter = exp
		exp = serviceaccount.ExtendedExpirationSeconds
	}
	claims := serviceaccount.NewClaims(sa, bound, now, exp, warnAfter, req.Spec.Audiences)
	token, err := s.tokens.Issue(claims)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("failed to generate token: %v", err))
	}
	out := req.DeepCopy()
	out.TypeMeta = metav1.TypeMeta{APIVersion: tokenRequestKind.GroupVersion().String(), Kind: tokenRequestKind.Kind}
	out.Status = authenticationv1.TokenRequestStatus{Token: token,
		ExpirationTimestamp: metav1.NewTime(now.Add(time.Duration(*out.Spec.ExpirationSeconds) * time.Second).Truncate(time.Second))}
	if !c.dryRun() {
		_ = c.rq.record.AddAnnotation("authentication.kubernetes.io/issued-credential-id", "JTI="+claims.ID)
	}
	return out, nil
}

func isSubset(sub, of []string) bool {
	for _, a := range sub {
		if !slices.Contains(of, a) {
			return false
		}
	}
	return true
}

// boundObjects reads the object a token is bound to.
func (s *Server) boundObjects(ctx context.Context, ns, saName string, ref *authenticationv1.BoundObjectReference) (serviceaccount.Bound, error) {
	var bound serviceaccount.Bound
	if ref == nil {
		return bound, nil
	}
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	var uid types.UID
	switch {
	case gvk.Group == "" && gvk.Kind == "Pod":
		pod, err := s.getPod(ctx, ns, ref.Name)
		if err != nil {
			return bound, err
		}
		if pod.Spec.ServiceAccountName != saName {
			return bound, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", saName))
		}
		bound.Pod, uid = pod, pod.UID
		bound.Node = s.podNode(ctx, pod)
	case gvk.Group == "" && gvk.Kind == "Node":
		node, err := s.getCore(ctx, "nodes", "", ref.Name)
		if err != nil {
			return bound, err
		}
		bound.Node = node.(*corev1.Node)
		uid = bound.Node.UID
	case gvk.Group == "" && gvk.Kind == "Secret":
		secret, err := s.getCore(ctx, "secrets", ns, ref.Name)
		if err != nil {
			return bound, err
		}
		bound.Secret = secret.(*corev1.Secret)
		uid = bound.Secret.UID
	default:
		return bound, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", gvk.String()))
	}
	if ref.UID != "" && uid != ref.UID {
		return bound, apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, ref.Name,
			fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	return bound, nil
}

// podNode is the node a bound pod runs on: the Node object, or only its
// name when it does not exist (ServiceAccountTokenPodNodeInfo).
func (s *Server) podNode(ctx context.Context, pod *corev1.Pod) *corev1.Node {
	if pod.Spec.NodeName == "" {
		return nil
	}
	if node, err := s.getCore(ctx, "nodes", "", pod.Spec.NodeName); err == nil {
		return node.(*corev1.Node)
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: pod.Spec.NodeName}}
}

// getCore reads a v1 object.
func (s *Server) getCore(ctx context.Context, resource, ns, name string) (runtime.Object, error) {
	res, _ := s.cat.Lookup(corev1.SchemeGroupVersion.WithResource(resource))
	return s.getObject(ctx, res, ns, name)
}
