package admissiontest

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/admitd/admitd/pkg/admission"
)

// Cluster is the cluster state a plugin reads, in memory: it serves as the
// plugin's NamespaceLookup, ObjectLookup, ObjectCache and ObjectCreator.
// Objects are typed (a *corev1.Pod for pods) and keyed by their resource,
// which Add derives from the Go type (client-go's scheme) unless given.
type Cluster struct {
	mu      sync.Mutex
	objects map[schema.GroupVersionResource]map[string]runtime.Object // by "ns/name"
	// sorted holds, per resource listed since its last new key, its keys
	// in order: a list walks them instead of sorting.
	sorted map[schema.GroupVersionResource][]string
}

var (
	_ admission.NamespaceLookup = (*Cluster)(nil)
	_ admission.ObjectLookup    = (*Cluster)(nil)
	_ admission.ObjectCache     = (*Cluster)(nil)
	_ admission.ObjectCreator   = (*Cluster)(nil)
	_ admission.StatusUpdater   = (*Cluster)(nil)
)

// NewCluster returns a cluster holding objs (see Add).
func NewCluster(objs ...runtime.Object) *Cluster {
	c := &Cluster{objects: map[schema.GroupVersionResource]map[string]runtime.Object{}}
	for _, o := range objs {
		c.Add(o)
	}
	return c
}

// Add stores obj under the resource of its Go type, replacing an object of
// the same name. It panics for a type client-go's scheme does not know: use
// AddAs.
func (c *Cluster) Add(obj runtime.Object) {
	gvr, err := resourceOf(obj)
	if err != nil {
		panic(err)
	}
	c.AddAs(gvr, obj)
}

// AddAs stores obj under gvr.
func (c *Cluster) AddAs(gvr schema.GroupVersionResource, obj runtime.Object) {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.objects[gvr] == nil {
		c.objects[gvr] = map[string]runtime.Object{}
	}
	key := m.GetNamespace() + "/" + m.GetName()
	if _, replaced := c.objects[gvr][key]; !replaced {
		delete(c.sorted, gvr)
	}
	c.objects[gvr][key] = obj
}

// sortedKeysLocked returns the keys of gvr's objects in order; c.mu is
// held.
func (c *Cluster) sortedKeysLocked(gvr schema.GroupVersionResource) []string {
	if keys, ok := c.sorted[gvr]; ok {
		return keys
	}
	keys := make([]string, 0, len(c.objects[gvr]))
	for k := range c.objects[gvr] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if c.sorted == nil {
		c.sorted = map[schema.GroupVersionResource][]string{}
	}
	c.sorted[gvr] = keys
	return keys
}

// Plugins returns pc with the cluster as its namespaces, objects, cache,
// creator and status updater.
func (c *Cluster) Plugins(pc admission.PluginContext) admission.PluginContext {
	pc.Namespaces, pc.Objects, pc.Cache, pc.Creator, pc.Status = c, c, c, c, c
	return pc
}

func resourceOf(obj runtime.Object) (schema.GroupVersionResource, error) {
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return schema.GroupVersionResource{}, fmt.Errorf("admissiontest: no resource known for %T: %v", obj, err)
	}
	gvr, _ := meta.UnsafeGuessKindToResource(gvks[0])
	return gvr, nil
}

// GetNamespace returns the namespace, or NotFound.
func (c *Cluster) GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	obj, err := c.GetObject(ctx, corev1.SchemeGroupVersion.WithResource("namespaces"), "", name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Namespace), nil
}

// GetObject returns the object, or NotFound.
func (c *Cluster) GetObject(_ context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o, ok := c.objects[gvr][namespace+"/"+name]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

// GetCachedObject is GetObject.
func (c *Cluster) GetCachedObject(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	return c.GetObject(ctx, gvr, namespace, name)
}

// ListCachedObjects returns the objects of namespace ("" for all) that sel
// selects, by namespace then name.
func (c *Cluster) ListCachedObjects(_ context.Context, gvr schema.GroupVersionResource, namespace string, sel labels.Selector) ([]runtime.Object, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []runtime.Object
	for _, k := range c.sortedKeysLocked(gvr) {
		o := c.objects[gvr][k]
		m, _ := meta.Accessor(o)
		if namespace != "" && m.GetNamespace() != namespace {
			continue
		}
		if sel != nil && !sel.Matches(labels.Set(m.GetLabels())) {
			continue
		}
		out = append(out, o)
	}
	return out, nil
}

// CreateObject stores obj, or fails with AlreadyExists.
func (c *Cluster) CreateObject(ctx context.Context, gvr schema.GroupVersionResource, namespace string, obj runtime.Object) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	if _, err := c.GetObject(ctx, gvr, namespace, m.GetName()); err == nil {
		return apierrors.NewAlreadyExists(gvr.GroupResource(), m.GetName())
	}
	c.AddAs(gvr, obj)
	return nil
}

// UpdateObjectStatus replaces the stored object with a copy of obj whose
// resourceVersion is one more, or fails with NotFound, or with Conflict when
// obj's resourceVersion is not the stored one's.
func (c *Cluster) UpdateObjectStatus(_ context.Context, gvr schema.GroupVersionResource, namespace string, obj runtime.Object) (runtime.Object, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := namespace + "/" + m.GetName()
	cur, ok := c.objects[gvr][key]
	if !ok {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), m.GetName())
	}
	cm, _ := meta.Accessor(cur)
	if m.GetResourceVersion() != cm.GetResourceVersion() {
		return nil, apierrors.NewConflict(gvr.GroupResource(), m.GetName(),
			fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	rv, _ := strconv.ParseUint(cm.GetResourceVersion(), 10, 64)
	stored := obj.DeepCopyObject()
	sm, _ := meta.Accessor(stored)
	sm.SetResourceVersion(strconv.FormatUint(rv+1, 10))
	c.objects[gvr][key] = stored
	return stored.DeepCopyObject(), nil
}
