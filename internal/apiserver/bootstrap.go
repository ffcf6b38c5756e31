package apiserver

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/storage"
)

// systemNamespaces exist in every cluster from the start.
var systemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// Bootstrap creates what a fresh cluster has: the system namespaces.
// Existing objects are left alone.
func (s *Server) Bootstrap(ctx context.Context) error {
	res, _ := s.cat.Lookup(corev1.SchemeGroupVersion.WithResource("namespaces"))
	for _, name := range systemNamespaces {
		ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
		if res.Strategy.Default != nil {
			res.Strategy.Default(ns)
		}
		s.fillSystemFields(ns)
		prepareForCreate(res, ns)
		data, err := encodeForStorage(ns)
		if err != nil {
			return err
		}
		if _, err := s.store.Create(ctx, storageKey(res, "", name), data); err != nil && !errors.Is(err, storage.ErrKeyExists) {
			return err
		}
	}
	return s.SyncCustomResources(ctx)
}
