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

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// RootCA is upstream's root-ca-cert-publisher controller
// (pkg/controller/certificates/rootcacertpublisher): every active namespace
// has a ConfigMap kube-root-ca.crt whose ca.crt is the CA bundle clients
// trust to reach the API server (the token volume of every pod projects
// it). The ConfigMap is created when the namespace appears, recreated when
// deleted, and its data and description annotation restored when changed;
// its other fields (labels, other annotations) are left alone.
type RootCA struct {
	store      storage.Store
	configMaps *registry.Resource
	client     dynamic.Interface
	ca         string
	log        *slog.Logger
	queue      workqueue.TypedRateLimitingInterface[string]
	first      *firstPass
}

// RootCAUser is the user the controller's requests run as.
var RootCAUser = ControllerUser("root-ca-cert-publisher")

const (
	// RootCAConfigMap is the name of the published ConfigMap.
	RootCAConfigMap = "kube-root-ca.crt"
	// rootCAKey holds the bundle in the ConfigMap.
	rootCAKey = "ca.crt"
	// rootCADescriptionAnnotation says what the ConfigMap is for.
	rootCADescriptionAnnotation = "kubernetes.io/description"
	rootCADescription           = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
)

var (
	configMapsGVR    = corev1.SchemeGroupVersion.WithResource("configmaps")
	configMapsPrefix = layout.GroupPrefix("") + "configmaps/"
)

// NewRootCA returns the controller publishing caPEM; its writes go through
// client (as RootCAUser).
func NewRootCA(store storage.Store, cat *registry.Catalogue, client dynamic.Interface, caPEM []byte, log *slog.Logger) *RootCA {
	cms, _ := cat.Lookup(configMapsGVR)
	return &RootCA{store: store, configMaps: cms, client: client, ca: string(caPEM), log: log, first: newFirstPass(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "root_ca_cert_publisher"})}
}

// Run keeps the ConfigMaps until ctx ends.
func (c *RootCA) Run(ctx context.Context) {
	runQueue(ctx, c.store, layout.GroupPrefix(""), c, c.queue, c.first.syncing(c.sync), c.log, "publishing the root CA will retry", "namespace")
}

// FirstPassDone is closed once the namespaces of the first list have been
// tried.
func (c *RootCA) FirstPassDone() <-chan struct{} { return c.first.Done() }

func (c *RootCA) reset(items []storage.KeyValue) {
	queueNamespaces(c.queue, c.first, items)
}

// event queues the namespace of a namespace write, and of any write or
// delete of a kube-root-ca.crt ConfigMap.
func (c *RootCA) event(ev storage.Event) {
	if ns, ok := strings.CutPrefix(ev.KV.Key, namespacesPrefix); ok {
		if ev.Type == storage.EventPut {
			c.queue.Add(ns)
		}
		return
	}
	if rest, ok := strings.CutPrefix(ev.KV.Key, configMapsPrefix); ok {
		if ns, name, ok := strings.Cut(rest, "/"); ok && name == RootCAConfigMap {
			c.queue.Add(ns)
		}
	}
}

// sync creates or repairs the ConfigMap of an active namespace.
func (c *RootCA) sync(ctx context.Context, ns string) error {
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
	kv, err = c.store.Get(ctx, layout.Key(c.configMaps, ns, RootCAConfigMap))
	if errors.Is(err, storage.ErrNotFound) {
		return c.create(ctx, ns)
	}
	if err != nil {
		return err
	}
	obj, err := layout.Decode(c.configMaps, kv)
	if err != nil {
		return err
	}
	return c.repair(ctx, obj.(*corev1.ConfigMap))
}

func (c *RootCA) create(ctx context.Context, ns string) error {
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": RootCAConfigMap, "namespace": ns,
			"annotations": map[string]any{rootCADescriptionAnnotation: rootCADescription}},
		"data": map[string]any{rootCAKey: c.ca},
	}}
	_, err := c.client.Resource(configMapsGVR).Namespace(ns).Create(ctx, cm, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		return nil // the write's event (or the namespace's) brings the namespace back
	}
	// Any other refusal is retried, a NotFound too: through admission,
	// NamespaceLifecycle can answer one for a namespace this controller has
	// already seen (its event may come before admission's namespace cache
	// has it); a namespace really gone ends the retries at the next sync.
	return err
}

// repair restores the data and the description of a ConfigMap that lost
// them; the update is conditional on the version read, and a conflict waits
// for the event of the newer version.
func (c *RootCA) repair(ctx context.Context, cm *corev1.ConfigMap) error {
	if len(cm.Data) == 1 && cm.Data[rootCAKey] == c.ca && cm.Annotations[rootCADescriptionAnnotation] != "" {
		return nil
	}
	cm.Data = map[string]string{rootCAKey: c.ca}
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[rootCADescriptionAnnotation] = rootCADescription
	return updateRead(ctx, c.client.Resource(configMapsGVR).Namespace(cm.Namespace), cm)
}
