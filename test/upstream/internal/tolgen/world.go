package tolgen

import (
	"context"
	"io"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

// World is the cluster state both plugins read: upstream's through
// informers of a fake clientset, admitd's through maps of the same
// objects.
type World struct {
	objects map[string]runtime.Object // by resource/namespace/name
	client  *fake.Clientset
	factory informers.SharedInformerFactory
}

func key(resource, namespace, name string) string { return resource + "/" + namespace + "/" + name }

// NewWorld holds objs (namespaces and RuntimeClasses).
func NewWorld(objs ...runtime.Object) *World {
	w := &World{objects: map[string]runtime.Object{}, client: fake.NewClientset(objs...)}
	w.factory = informers.NewSharedInformerFactory(w.client, 0)
	for _, o := range objs {
		m, _ := meta.Accessor(o)
		switch o.(type) {
		case *corev1.Namespace:
			w.objects[key("namespaces", "", m.GetName())] = o
		default:
			w.objects[key("runtimeclasses", "", m.GetName())] = o
		}
	}
	return w
}

// InitUpstream builds upstream's plugin name (registered by register) with
// config, initialized as kube-apiserver does, and starts the informers it
// asked for.
func (w *World) InitUpstream(t testing.TB, register func(*upadmission.Plugins), name string, config io.Reader) (upadmission.Interface, error) {
	t.Helper()
	ps := upadmission.NewPlugins()
	register(ps)
	init := genericinitializer.New(w.client, nil, w.factory, nil, utilfeature.DefaultFeatureGate, nil, nil, nil)
	p, err := ps.InitPlugin(name, config, init)
	if err != nil {
		return nil, err
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	w.factory.Start(stop)
	for typ, ok := range w.factory.WaitForCacheSync(stop) {
		if !ok {
			t.Fatalf("informer of %v did not sync", typ)
		}
	}
	return p, nil
}

// GetNamespace is admitd's NamespaceLookup over the world.
func (w *World) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	if o, ok := w.objects[key("namespaces", "", name)]; ok {
		return o.(*corev1.Namespace), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
}

// GetCachedObject is admitd's ObjectCache over the world.
func (w *World) GetCachedObject(_ context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	if o, ok := w.objects[key(gvr.Resource, namespace, name)]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

// ListCachedObjects is not used by these plugins.
func (w *World) ListCachedObjects(context.Context, schema.GroupVersionResource, string, labels.Selector) ([]runtime.Object, error) {
	return nil, nil
}
