package controllers

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// Namespaces empties a Terminating namespace and then finalizes it: the job
// of upstream's namespace controller (pkg/controller/namespace/deletion).
// Like it, it deletes through the API as its own user, so admission,
// validation and audit see every delete, and it removes the "kubernetes"
// finalizer through the namespace's finalize subresource; the API server
// removes the namespace once nothing holds it. It reads the namespace's
// contents from storage.
type Namespaces struct {
	store  storage.Store
	cat    *registry.Catalogue
	client dynamic.Interface
	log    *slog.Logger
	queue  workqueue.TypedDelayingInterface[string]
}

// NamespacesUser is the user the controller's requests run as.
var NamespacesUser = ControllerUser("namespace-controller")

// retryNamespace is how long a namespace waits before it is tried again.
const retryNamespace = time.Second

var namespacesGVR = corev1.SchemeGroupVersion.WithResource("namespaces")

// NewNamespaces returns the controller; its writes go through client (as
// NamespacesUser).
func NewNamespaces(store storage.Store, cat *registry.Catalogue, client dynamic.Interface, log *slog.Logger) *Namespaces {
	return &Namespaces{store: store, cat: cat, client: client, log: log, queue: workqueue.NewTypedDelayingQueue[string]()}
}

// Run finalizes deleted namespaces until ctx ends.
func (c *Namespaces) Run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		c.queue.ShutDown()
	}()
	go follow(ctx, c.store, namespacesPrefix, c, c.log)
	for c.processNext(ctx) {
	}
}

func (c *Namespaces) reset(items []storage.KeyValue) {
	for _, kv := range items {
		c.enqueueDeleting(kv)
	}
}

func (c *Namespaces) event(ev storage.Event) {
	if ev.Type == storage.EventPut {
		c.enqueueDeleting(ev.KV)
	}
}

// enqueueDeleting queues a namespace that is being deleted.
func (c *Namespaces) enqueueDeleting(kv storage.KeyValue) {
	name, ok := strings.CutPrefix(kv.Key, namespacesPrefix)
	if !ok {
		return
	}
	if s, err := decodeStored(kv.Value); err == nil && s.Metadata.DeletionTimestamp != nil {
		c.queue.Add(name)
	}
}

func (c *Namespaces) processNext(ctx context.Context) bool {
	name, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(name)
	if err := c.finalize(ctx, name); err != nil && ctx.Err() == nil {
		if !errors.Is(err, errNamespaceNotEmpty) {
			c.log.Warn("finalizing namespace", "namespace", name, "err", err)
		}
		c.queue.AddAfter(name, retryNamespace)
	}
	return true
}

var errNamespaceNotEmpty = errors.New("namespace not empty yet")

func (c *Namespaces) finalize(ctx context.Context, name string) error {
	remaining := 0
	for _, res := range c.cat.Resources() {
		if !res.Namespaced || res.Version != res.StorageVersion || res.StoredAs != nil || !slices.Contains(res.Verbs, "delete") {
			continue
		}
		n, err := c.emptyResource(ctx, res, name)
		if err != nil {
			return err
		}
		remaining += n
	}
	if remaining > 0 {
		return errNamespaceNotEmpty
	}
	return c.removeFinalizer(ctx, name)
}

// emptyPage is how many objects emptyResource reads at a time: the
// objects of a large namespace are not all held at once while each is
// deleted.
var emptyPage int64 = 500

// emptyResource deletes the objects of res in namespace and counts those
// that stay, waiting for their finalizers. It reads them a page at a time
// at the current revision, each page after the last key of the one before.
func (c *Namespaces) emptyResource(ctx context.Context, res *registry.Resource, namespace string) (int, error) {
	prefix := layout.ListPrefix(res, namespace)
	opts := storage.ListOptions{Limit: emptyPage, NoRemainingCount: true}
	remaining := 0
	for {
		page, err := c.store.List(ctx, prefix, opts)
		if err != nil {
			return 0, err
		}
		n, err := c.deletePage(ctx, res, namespace, page.Items)
		if err != nil {
			return 0, err
		}
		remaining += n
		if !page.More || len(page.Items) == 0 {
			return remaining, nil
		}
		opts.StartKey = page.Items[len(page.Items)-1].Key + "\x00"
	}
}

// deletePage deletes the objects of items not being deleted yet and counts
// those that have finalizers.
func (c *Namespaces) deletePage(ctx context.Context, res *registry.Resource, namespace string, items []storage.KeyValue) (int, error) {
	rc := c.client.Resource(res.GroupVersionResource).Namespace(namespace)
	background := metav1.DeletePropagationBackground
	remaining := 0
	for _, kv := range items {
		s, err := decodeStored(kv.Value)
		if err != nil {
			return 0, err
		}
		if len(s.Metadata.Finalizers) > 0 {
			remaining++
		}
		if s.Metadata.DeletionTimestamp != nil {
			continue
		}
		err = rc.Delete(ctx, s.Metadata.Name, metav1.DeleteOptions{PropagationPolicy: &background})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return 0, err
		}
	}
	return remaining, nil
}

// removeFinalizer drops the "kubernetes" finalizer through the finalize
// subresource.
func (c *Namespaces) removeFinalizer(ctx context.Context, name string) error {
	rc := c.client.Resource(namespacesGVR)
	ns, err := rc.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	finalizers, _, _ := unstructured.NestedStringSlice(ns.Object, "spec", "finalizers")
	kept := slices.DeleteFunc(slices.Clone(finalizers), func(f string) bool { return f == string(corev1.FinalizerKubernetes) })
	if len(kept) == len(finalizers) {
		return nil
	}
	if err := unstructured.SetNestedStringSlice(ns.Object, kept, "spec", "finalizers"); err != nil {
		return err
	}
	_, err = rc.Update(ctx, ns, metav1.UpdateOptions{}, "finalize")
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
