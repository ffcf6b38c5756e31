package controllers

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/serviceaccount"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// Tokens is upstream's service-account tokens controller
// (kube-controller-manager's serviceaccount-token): a Secret of type
// kubernetes.io/service-account-token gets the legacy token of the
// ServiceAccount its annotation names, the CA bundle and its namespace; a
// token Secret whose ServiceAccount is gone (or was recreated with another
// uid) is deleted. Unlike upstream it does not remove a deleted Secret
// from the ServiceAccount's secrets list.
type Tokens struct {
	store   storage.Store
	secrets *registry.Resource
	sas     *registry.Resource
	client  dynamic.Interface
	issuer  *serviceaccount.Issuer
	rootCA  []byte
	log     *slog.Logger
	queue   workqueue.TypedRateLimitingInterface[string]
}

// TokensUser is the user the controller's requests run as: upstream runs
// it with kube-controller-manager's own credentials.
var TokensUser = authenticationv1.UserInfo{Username: "system:kube-controller-manager", Groups: []string{"system:authenticated"}}

var secretsGVR = corev1.SchemeGroupVersion.WithResource("secrets")

// NewTokens returns the controller: it signs with issuer, fills ca.crt
// with rootCA and writes through client (as TokensUser).
func NewTokens(store storage.Store, cat *registry.Catalogue, client dynamic.Interface, issuer *serviceaccount.Issuer, rootCA []byte, log *slog.Logger) *Tokens {
	secrets, _ := cat.Lookup(secretsGVR)
	sas, _ := cat.Lookup(serviceAccountsGVR)
	return &Tokens{store: store, secrets: secrets, sas: sas, client: client, issuer: issuer, rootCA: rootCA, log: log,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "serviceaccount_tokens_service"})}
}

// Run keeps the token Secrets until ctx ends.
func (c *Tokens) Run(ctx context.Context) {
	runQueue(ctx, c.store, layout.GroupPrefix(""), c, c.queue, c.sync, c.log, "syncing a service account token secret will retry", "secret")
}

func (c *Tokens) reset(items []storage.KeyValue) {
	for _, kv := range items {
		c.enqueue(kv.Key)
	}
}

// event queues a written Secret, and every Secret of the namespace of a
// deleted ServiceAccount.
func (c *Tokens) event(ev storage.Event) {
	if ev.Type == storage.EventPut {
		c.enqueue(ev.KV.Key)
		return
	}
	rest, ok := strings.CutPrefix(ev.KV.Key, serviceAccountsPrefix)
	if !ok {
		return
	}
	ns, _, _ := strings.Cut(rest, "/")
	page, err := c.store.List(context.Background(), layout.ListPrefix(c.secrets, ns), storage.ListOptions{})
	if err != nil {
		c.log.Warn("listing the secrets of a deleted service account", "namespace", ns, "err", err)
		return
	}
	c.reset(page.Items)
}

func (c *Tokens) enqueue(key string) {
	if rest, ok := strings.CutPrefix(key, layout.ResourcePrefix(c.secrets)); ok {
		c.queue.Add(rest)
	}
}

// sync brings the token Secret ns/name up to date, or deletes it.
func (c *Tokens) sync(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	secret, err := c.get(ctx, c.secrets, ns, name)
	if secret == nil || err != nil {
		return err
	}
	s := secret.(*corev1.Secret)
	if s.Type != corev1.SecretTypeServiceAccountToken || s.DeletionTimestamp != nil {
		return nil
	}
	saName, saUID := s.Annotations[corev1.ServiceAccountNameKey], s.Annotations[corev1.ServiceAccountUIDKey]
	obj, err := c.get(ctx, c.sas, ns, saName)
	if err != nil {
		return err
	}
	if obj == nil || (saUID != "" && string(obj.(*corev1.ServiceAccount).UID) != saUID) {
		return c.delete(ctx, s)
	}
	return c.fill(ctx, obj.(*corev1.ServiceAccount), s)
}

// get reads an object from storage; nil when it does not exist.
func (c *Tokens) get(ctx context.Context, res *registry.Resource, ns, name string) (runtime.Object, error) {
	kv, err := c.store.Get(ctx, layout.Key(res, ns, name))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return layout.Decode(res, kv)
}

func (c *Tokens) delete(ctx context.Context, s *corev1.Secret) error {
	uid := s.UID
	err := c.client.Resource(secretsGVR).Namespace(s.Namespace).Delete(ctx, s.Name,
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// fill adds what the Secret lacks: the token, the CA bundle, the
// namespace; the update is conditional on the version read, and a
// conflict waits for the event of the newer version.
func (c *Tokens) fill(ctx context.Context, sa *corev1.ServiceAccount, s *corev1.Secret) error {
	needsCA := len(c.rootCA) > 0 && !bytes.Equal(s.Data[corev1.ServiceAccountRootCAKey], c.rootCA)
	needsNS := len(s.Data[corev1.ServiceAccountNamespaceKey]) == 0
	needsToken := len(s.Data[corev1.ServiceAccountTokenKey]) == 0
	if !needsCA && !needsNS && !needsToken {
		return nil
	}
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	if needsCA {
		s.Data[corev1.ServiceAccountRootCAKey] = c.rootCA
	}
	if needsNS {
		s.Data[corev1.ServiceAccountNamespaceKey] = []byte(s.Namespace)
	}
	if needsToken {
		token, err := c.issuer.IssueLegacy(sa, s)
		if err != nil {
			return err
		}
		s.Data[corev1.ServiceAccountTokenKey] = []byte(token)
	}
	s.Annotations[corev1.ServiceAccountNameKey] = sa.Name
	s.Annotations[corev1.ServiceAccountUIDKey] = string(sa.UID)
	return updateRead(ctx, c.client.Resource(secretsGVR).Namespace(s.Namespace), s)
}
