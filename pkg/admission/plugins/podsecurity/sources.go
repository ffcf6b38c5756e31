package podsecurity

import (
	"context"
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	psadmission "k8s.io/pod-security-admission/admission"
	psapi "k8s.io/pod-security-admission/api"

	"github.com/admitd/admitd/pkg/admission"
)

var (
	namespacesGVR = corev1.SchemeGroupVersion.WithResource("namespaces")
	podsGVR       = corev1.SchemeGroupVersion.WithResource("pods")
)

// attributes show admitd's request attributes to the library. The objects
// are already the v1 types the library expects.
type attributes struct{ a *admission.Attributes }

var _ psapi.Attributes = attributes{}

func (at attributes) GetName() string                          { return at.a.Name }
func (at attributes) GetNamespace() string                     { return at.a.Namespace }
func (at attributes) GetResource() schema.GroupVersionResource { return at.a.Resource }
func (at attributes) GetKind() schema.GroupVersionKind         { return at.a.Kind }
func (at attributes) GetSubresource() string                   { return at.a.Subresource }
func (at attributes) GetUserName() string                      { return at.a.UserInfo.Username }

func (at attributes) GetOperation() admissionv1.Operation {
	return admissionv1.Operation(at.a.Operation)
}

func (at attributes) GetObject() (runtime.Object, error)    { return at.a.Object, nil }
func (at attributes) GetOldObject() (runtime.Object, error) { return at.a.OldObject, nil }

// namespaceGetter reads namespaces through pc.Namespaces, or from the
// namespace cache when the context has no lookup.
func namespaceGetter(pc admission.PluginContext) (psadmission.NamespaceGetter, error) {
	if pc.Namespaces != nil {
		return pc.Namespaces, nil
	}
	if pc.Cache != nil {
		return cachedNamespaces{pc.Cache}, nil
	}
	return nil, fmt.Errorf("missing namespace lookup")
}

type cachedNamespaces struct{ cache admission.ObjectCache }

func (c cachedNamespaces) GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	obj, err := c.cache.GetCachedObject(ctx, namespacesGVR, "", name)
	if err != nil {
		return nil, err
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, fmt.Errorf("unexpected namespace type %T", obj)
	}
	return ns, nil
}

// podLister lists the pods of a namespace from the watch-fed pod cache, as
// upstream lists them from its pod informer. The pods are shared; the
// library only reads them.
type podLister struct{ cache admission.ObjectCache }

func (l podLister) ListPods(ctx context.Context, namespace string) ([]*corev1.Pod, error) {
	if l.cache == nil {
		return nil, errors.New("no pod cache")
	}
	objs, err := l.cache.ListCachedObjects(ctx, podsGVR, namespace, nil)
	if err != nil {
		return nil, err
	}
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, obj := range objs {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return nil, fmt.Errorf("unexpected pod type %T", obj)
		}
		pods = append(pods, pod)
	}
	return pods, nil
}
