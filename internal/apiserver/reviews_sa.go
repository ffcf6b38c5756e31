package apiserver

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/serviceaccount"
)

// tokenReviewer is what TokenReview asks: Config.TokenAuthenticator, then
// the service-account tokens (Config.ServiceAccountAuthenticators).
func (s *Server) tokenReviewer() auth.AudienceTokenAuthenticator {
	sa := s.cfg.ServiceAccountAuthenticators
	if sa == nil {
		own := s.tokens.Authenticator(storedObjects{s})
		own.Now = s.cfg.Now
		sa = []auth.AudienceTokenAuthenticator{own}
	}
	if s.cfg.TokenAuthenticator == nil {
		return auth.TokenReviewer(sa...)
	}
	return auth.TokenReviewer(append([]auth.AudienceTokenAuthenticator{s.cfg.TokenAuthenticator}, sa...)...)
}

// storedObjects reads the objects a service-account token is bound to from
// storage, as a missing one's NotFound.
type storedObjects struct{ s *Server }

var _ serviceaccount.Getter = storedObjects{}

func (o storedObjects) get(ctx context.Context, resource, namespace, name string) (runtime.Object, error) {
	res, ok := o.s.cat.Lookup(corev1.SchemeGroupVersion.WithResource(resource))
	if !ok {
		return nil, fmt.Errorf("no resource %s", resource)
	}
	return o.s.getObject(ctx, res, namespace, name)
}

func (o storedObjects) ServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	obj, err := o.get(ctx, "serviceaccounts", namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.ServiceAccount), nil
}

func (o storedObjects) Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	obj, err := o.get(ctx, "secrets", namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Secret), nil
}

func (o storedObjects) Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	obj, err := o.get(ctx, "pods", namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Pod), nil
}

func (o storedObjects) Node(ctx context.Context, name string) (*corev1.Node, error) {
	obj, err := o.get(ctx, "nodes", "", name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Node), nil
}
