package webhook

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Hub marks the Go type of the version every other version of a kind
// converts through (controller-runtime's conversion.Hub).
type Hub interface {
	runtime.Object
	Hub()
}

// Convertible is the Go type of a version other than the hub: it converts
// itself to the hub and fills itself from the hub (controller-runtime's
// conversion.Convertible).
type Convertible interface {
	runtime.Object
	ConvertTo(dst Hub) error
	ConvertFrom(src Hub) error
}

// SchemeConverter converts between typed versions registered in scheme:
// for each kind, one version's type implements Hub and every other
// version's type Convertible. A spoke converts to the hub with ConvertTo,
// the hub to a spoke with ConvertFrom, and a spoke to another spoke
// through the hub. Objects are decoded into and encoded from their Go
// types with the unstructured converter, so fields a type lacks are
// dropped, as with controller-runtime.
func SchemeConverter(scheme *runtime.Scheme) Converter {
	return &schemeConverter{scheme: scheme}
}

type schemeConverter struct {
	scheme *runtime.Scheme
}

func (c *schemeConverter) Convert(_ context.Context, obj *unstructured.Unstructured, toVersion string) (*unstructured.Unstructured, error) {
	from := obj.GroupVersionKind()
	gv, err := schema.ParseGroupVersion(toVersion)
	if err != nil {
		return nil, err
	}
	to := gv.WithKind(from.Kind)
	if from == to {
		return obj, nil
	}
	src, err := c.typed(from)
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, src); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", from, err)
	}
	dst, err := c.typed(to)
	if err != nil {
		return nil, err
	}
	if err := c.viaHub(src, dst, from.GroupKind()); err != nil {
		return nil, err
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(dst)
	if err != nil {
		return nil, err
	}
	out := &unstructured.Unstructured{Object: content}
	out.SetGroupVersionKind(to)
	return out, nil
}

func (c *schemeConverter) typed(gvk schema.GroupVersionKind) (runtime.Object, error) {
	obj, err := c.scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj, nil
}

// viaHub converts src to dst: directly when one of them is the hub, else
// through a new object of the kind's hub type.
func (c *schemeConverter) viaHub(src, dst runtime.Object, gk schema.GroupKind) error {
	if hub, ok := src.(Hub); ok {
		spoke, ok := dst.(Convertible)
		if !ok {
			return fmt.Errorf("%T is not convertible", dst)
		}
		return spoke.ConvertFrom(hub)
	}
	spoke, ok := src.(Convertible)
	if !ok {
		return fmt.Errorf("%T is not convertible", src)
	}
	if hub, ok := dst.(Hub); ok {
		return spoke.ConvertTo(hub)
	}
	hub, err := c.hubOf(gk)
	if err != nil {
		return err
	}
	if err := spoke.ConvertTo(hub); err != nil {
		return err
	}
	target, ok := dst.(Convertible)
	if !ok {
		return fmt.Errorf("%T is not convertible", dst)
	}
	return target.ConvertFrom(hub)
}

// hubOf returns a new object of gk's hub type.
func (c *schemeConverter) hubOf(gk schema.GroupKind) (Hub, error) {
	var found []Hub
	for gvk := range c.scheme.AllKnownTypes() {
		if gvk.GroupKind() != gk {
			continue
		}
		obj, err := c.typed(gvk)
		if err != nil {
			return nil, err
		}
		if hub, ok := obj.(Hub); ok {
			found = append(found, hub)
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("%s needs exactly one hub version, found %d", gk, len(found))
	}
	return found[0], nil
}
