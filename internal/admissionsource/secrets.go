package admissionsource

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// SecretLookup reads Secrets from storage (for CA injection).
type SecretLookup struct {
	store storage.Store
	res   *registry.Resource
}

// NewSecretLookup returns a lookup over store; nil when Secrets are not
// served.
func NewSecretLookup(store storage.Store, cat *registry.Catalogue) *SecretLookup {
	res, ok := cat.Lookup(corev1.SchemeGroupVersion.WithResource("secrets"))
	if !ok {
		return nil
	}
	return &SecretLookup{store: store, res: res}
}

// GetSecret returns the Secret, or a NotFound StatusError.
func (l *SecretLookup) GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	kv, err := l.store.Get(ctx, layout.Key(l.res, namespace, name))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, apierrors.NewNotFound(l.res.GroupResource(), name)
	}
	if err != nil {
		return nil, err
	}
	obj, err := layout.Decode(l.res, kv)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Secret), nil
}
