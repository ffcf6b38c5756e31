package controllers

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// ServiceAccounts is upstream's serviceaccounts controller
// (pkg/controller/serviceaccount): every active namespace has a
// ServiceAccount "default", created when the namespace appears and again
// if it is deleted.
type ServiceAccounts struct {
	store  storage.Store
	client dynamic.Interface
	log    *slog.Logger
	queue  workqueue.TypedRateLimitingInterface[string]
	first  *firstPass
}

// ServiceAccountsUser is the user the controller's requests run as.
var ServiceAccountsUser = ControllerUser("service-account-controller")

const defaultServiceAccount = "default"

var (
	namespacesPrefix      = layout.GroupPrefix("") + "namespaces/"
	serviceAccountsPrefix = layout.GroupPrefix("") + "serviceaccounts/"
)

var serviceAccountsGVR = corev1.SchemeGroupVersion.WithResource("serviceaccounts")

// NewServiceAccounts returns the controller; its creates go through client
// (as ServiceAccountsUser).
func NewServiceAccounts(store storage.Store, client dynamic.Interface, log *slog.Logger) *ServiceAccounts {
	return &ServiceAccounts{store: store, client: client, log: log, first: newFirstPass(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "serviceaccount"})}
}

// Run keeps the default service accounts until ctx ends.
func (c *ServiceAccounts) Run(ctx context.Context) {
	runQueue(ctx, c.store, layout.GroupPrefix(""), c, c.queue, c.first.syncing(c.sync), c.log, "creating the default service account will retry", "namespace")
}

// FirstPassDone is closed once the namespaces of the first list have been
// tried.
func (c *ServiceAccounts) FirstPassDone() <-chan struct{} { return c.first.Done() }

func (c *ServiceAccounts) reset(items []storage.KeyValue) {
	queueNamespaces(c.queue, c.first, items)
}

func (c *ServiceAccounts) event(ev storage.Event) {
	if ns, ok := strings.CutPrefix(ev.KV.Key, namespacesPrefix); ok && ev.Type == storage.EventPut {
		c.queue.Add(ns)
		return
	}
	if rest, ok := strings.CutPrefix(ev.KV.Key, serviceAccountsPrefix); ok && ev.Type == storage.EventDelete {
		if ns, name, ok := strings.Cut(rest, "/"); ok && name == defaultServiceAccount {
			c.queue.Add(ns)
		}
	}
}

// sync creates the namespace's default service account if the namespace is
// active and the account is missing.
func (c *ServiceAccounts) sync(ctx context.Context, ns string) error {
	kv, err := c.store.Get(ctx, namespacesPrefix+ns)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	s, err := decodeStored(kv.Value)
	if err != nil {
		return err
	}
	if s.Metadata.DeletionTimestamp != nil || s.Status.Phase != string(corev1.NamespaceActive) {
		return nil
	}
	_, err = c.store.Get(ctx, serviceAccountsPrefix+ns+"/"+defaultServiceAccount)
	if err == nil || !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	sa := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ServiceAccount",
		"metadata": map[string]any{"name": defaultServiceAccount, "namespace": ns},
	}}
	_, err = c.client.Resource(serviceAccountsGVR).Namespace(ns).Create(ctx, sa, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		return nil
	}
	return err
}
