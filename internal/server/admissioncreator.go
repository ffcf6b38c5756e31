package server

import (
	"context"
	"net/http"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/pkg/admission"
)

// loopbackCreator is admission.ObjectCreator over the API server's loopback
// client as system:apiserver, as upstream's plugins create through the
// server's loopback clientset.
type loopbackCreator struct{ client dynamic.Interface }

var (
	_ admission.ObjectCreator = loopbackCreator{}
	_ admission.StatusUpdater = loopbackCreator{}
)

func newLoopbackCreator(rt http.RoundTripper) (loopbackCreator, error) {
	c, err := controllers.NewClient(rt)
	return loopbackCreator{client: c}, err
}

// CreateObject creates obj; the server's StatusError comes back as is.
func (c loopbackCreator) CreateObject(ctx context.Context, gvr schema.GroupVersionResource, namespace string, obj runtime.Object) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetAPIVersion() == "" {
		u.SetAPIVersion(gvr.GroupVersion().String())
	}
	_, err = c.client.Resource(gvr).Namespace(namespace).Create(ctx, u, metav1.CreateOptions{})
	return err
}

// UpdateObjectStatus PUTs obj to the status subresource (its
// resourceVersion a precondition) and returns the stored object in obj's
// type; the server's StatusError comes back as is.
func (c loopbackCreator) UpdateObjectStatus(ctx context.Context, gvr schema.GroupVersionResource, namespace string, obj runtime.Object) (runtime.Object, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetAPIVersion() == "" {
		u.SetAPIVersion(gvr.GroupVersion().String())
	}
	if u.GetKind() == "" {
		if gvks, _, err := scheme.Scheme.ObjectKinds(obj); err == nil && len(gvks) > 0 {
			u.SetKind(gvks[0].Kind)
		}
	}
	got, err := c.client.Resource(gvr).Namespace(namespace).UpdateStatus(ctx, u, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	out := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(got.Object, out); err != nil {
		return nil, err
	}
	return out, nil
}
