package updiff

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/featuregate"
)

// Nodes is admitd's ObjectCache over a fixed list of nodes: any other
// resource is empty.
type Nodes []*corev1.Node

// GetCachedObject implements admission.ObjectCache.
func (n Nodes) GetCachedObject(_ context.Context, gvr schema.GroupVersionResource, _, name string) (runtime.Object, error) {
	if gvr.Group == "" && gvr.Resource == "nodes" {
		for _, o := range n {
			if o.Name == name {
				return o, nil
			}
		}
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

// ListCachedObjects implements admission.ObjectCache.
func (n Nodes) ListCachedObjects(_ context.Context, gvr schema.GroupVersionResource, _ string, sel labels.Selector) ([]runtime.Object, error) {
	var out []runtime.Object
	if gvr.Group == "" && gvr.Resource == "nodes" {
		for _, o := range n {
			if sel == nil || sel.Matches(labels.Set(o.Labels)) {
				out = append(out, o)
			}
		}
	}
	return out, nil
}

// NodeInformers returns an informer factory over a fake clientset holding
// nodes; register must ask it for its informers (the plugin's
// SetExternalKubeInformerFactory), then the factory is started and synced.
func NodeInformers(t testing.TB, nodes []*corev1.Node, register func(informers.SharedInformerFactory)) {
	t.Helper()
	var objs []runtime.Object
	for _, n := range nodes {
		objs = append(objs, n.DeepCopy())
	}
	f := informers.NewSharedInformerFactory(fake.NewClientset(objs...), 0)
	register(f)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	f.Start(stop)
	for typ, ok := range f.WaitForCacheSync(stop) {
		if !ok {
			t.Fatalf("informer of %v did not sync", typ)
		}
	}
}

// Gates is a feature gate for upstream's plugins with exactly the named
// gates on; plugins only ask Enabled.
type Gates map[featuregate.Feature]bool

type gates struct {
	featuregate.FeatureGate
	on Gates
}

func (g gates) Enabled(f featuregate.Feature) bool { return g.on[f] }

// FeatureGate returns g as upstream's FeatureGate.
func (g Gates) FeatureGate() featuregate.FeatureGate { return gates{on: g} }
