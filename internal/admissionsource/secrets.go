package admissionsource

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// SecretLookup reads Secrets (for CA injection) from the secret cache.
type SecretLookup struct {
	cache *Cache
}

// NewSecretLookup returns a lookup that reads store at each call; nil when
// Secrets are not served.
func NewSecretLookup(store storage.Store, cat *registry.Catalogue) *SecretLookup {
	return NewSources(store, cat).Secrets()
}

// Secrets returns the lookup over the secret cache; nil when Secrets are
// not served.
func (s *Sources) Secrets() *SecretLookup {
	c := s.For(Secrets)
	if c == nil {
		return nil
	}
	return &SecretLookup{cache: c}
}

// GetSecret returns the Secret, or a NotFound StatusError.
func (l *SecretLookup) GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	obj, err := l.cache.Get(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Secret), nil
}
