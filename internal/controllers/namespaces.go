package controllers

import (
	"cmp"
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
	"k8s.io/apimachinery/pkg/runtime"
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
	return &Namespaces{store: store, cat: cat, client: client, log: log, queue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: "namespace"})}
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

// finalize makes a pass over a Terminating namespace, as upstream's
// deleter: it deletes the pods first and, once none is left, every other
// resource's objects; it writes the namespace's conditions from what is
// left; and with nothing left it removes the "kubernetes" finalizer.
func (c *Namespaces) finalize(ctx context.Context, name string) error {
	ns, err := c.getNamespace(ctx, name)
	if err != nil || ns == nil || ns.DeletionTimestamp == nil || len(ns.Spec.Finalizers) == 0 {
		return err
	}
	content := newNamespaceContent()
	for _, res := range c.contentResources() {
		c.emptyAndCount(ctx, res, ns, content)
		if res.GroupVersionResource == podsGVR && content.left() {
			c.updateConditions(ctx, ns, content.conditions(false))
			return errNamespaceNotEmpty
		}
	}
	c.updateConditions(ctx, ns, content.conditions(true))
	if len(content.errs) > 0 {
		return errors.Join(content.errs...)
	}
	if content.left() {
		return errNamespaceNotEmpty
	}
	return c.removeFinalizer(ctx, name)
}

// contentResources are the namespaced resources the controller empties,
// pods first.
func (c *Namespaces) contentResources() []*registry.Resource {
	var out []*registry.Resource
	for _, res := range c.cat.Resources() {
		if !res.Namespaced || res.Version != res.StorageVersion || res.StoredAs != nil || !slices.Contains(res.Verbs, "delete") {
			continue
		}
		out = append(out, res)
	}
	slices.SortStableFunc(out, func(a, b *registry.Resource) int {
		return cmp.Compare(boolRank(a.GroupVersionResource != podsGVR), boolRank(b.GroupVersionResource != podsGVR))
	})
	return out
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// getNamespace reads the namespace through the API; nil when it is gone.
func (c *Namespaces) getNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	u, err := c.client.Resource(namespacesGVR).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ns corev1.Namespace
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &ns); err != nil {
		return nil, err
	}
	return &ns, nil
}

// updateConditions writes the namespace's conditions from found when they
// change. A failed write is logged, as upstream: the next pass writes
// them.
func (c *Namespaces) updateConditions(ctx context.Context, ns *corev1.Namespace, found []corev1.NamespaceCondition) {
	ns = ns.DeepCopy()
	if !mergeNamespaceConditions(&ns.Status, found, metav1.Now()) {
		return
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ns)
	if err == nil {
		_, err = c.client.Resource(namespacesGVR).UpdateStatus(ctx, &unstructured.Unstructured{Object: obj}, metav1.UpdateOptions{})
	}
	if err != nil && ctx.Err() == nil {
		c.log.Debug("updating the conditions of a terminating namespace", "namespace", ns.Name, "err", err)
	}
}

// emptyPage is how many objects emptyResource reads at a time: the
// objects of a large namespace are not all held at once while each is
// deleted.
var emptyPage int64 = 500

// emptyAndCount deletes the objects of res in ns and adds what is left of
// them, or the error deleting them, to content.
func (c *Namespaces) emptyAndCount(ctx context.Context, res *registry.Resource, ns *corev1.Namespace, content *namespaceContent) {
	seen, err := c.emptyResource(ctx, res, ns.Name)
	if err != nil {
		content.errs = append(content.errs, err)
		return
	}
	if seen == 0 {
		return
	}
	if err := c.countLeft(ctx, res, ns, content); err != nil {
		content.errs = append(content.errs, err)
	}
}

// emptyResource deletes the objects of res in namespace that are not
// being deleted yet and returns how many it saw. It reads them a page at a
// time at the current revision, each page after the last key of the one
// before.
func (c *Namespaces) emptyResource(ctx context.Context, res *registry.Resource, namespace string) (int, error) {
	seen := 0
	err := c.eachPage(ctx, res, namespace, func(items []storage.KeyValue) error {
		seen += len(items)
		return c.deletePage(ctx, res, namespace, items)
	})
	return seen, err
}

// eachPage calls f with the stored objects of res in namespace, a page at
// a time.
func (c *Namespaces) eachPage(ctx context.Context, res *registry.Resource, namespace string, f func([]storage.KeyValue) error) error {
	prefix := layout.ListPrefix(res, namespace)
	opts := storage.ListOptions{Limit: emptyPage, NoRemainingCount: true}
	for {
		page, err := c.store.List(ctx, prefix, opts)
		if err != nil {
			return err
		}
		if len(page.Items) == 0 {
			return nil
		}
		if err := f(page.Items); err != nil {
			return err
		}
		if !page.More {
			return nil
		}
		opts.StartKey = page.Items[len(page.Items)-1].Key + "\x00"
	}
}

// deletePage deletes the objects of items not being deleted yet.
func (c *Namespaces) deletePage(ctx context.Context, res *registry.Resource, namespace string, items []storage.KeyValue) error {
	rc := c.client.Resource(res.GroupVersionResource).Namespace(namespace)
	background := metav1.DeletePropagationBackground
	for _, kv := range items {
		s, err := decodeStored(kv.Value)
		if err != nil {
			return err
		}
		if s.Metadata.DeletionTimestamp != nil {
			continue
		}
		err = rc.Delete(ctx, s.Metadata.Name, metav1.DeleteOptions{PropagationPolicy: &background})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
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
