package registry

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// The helpers below treat "status" generically: the Status field of a
// k8s.io/api struct, or the "status" key of a custom resource.

func statusField(obj runtime.Object) (reflect.Value, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	f := v.Elem().FieldByName("Status")
	return f, f.IsValid() && f.CanSet()
}

// copyObjectMeta sets dst's ObjectMeta to src's, for k8s.io/api structs.
func copyObjectMeta(dst, src runtime.Object) bool {
	d, s := reflect.ValueOf(dst), reflect.ValueOf(src)
	if d.Kind() != reflect.Pointer || s.Kind() != reflect.Pointer || d.Type() != s.Type() || d.Elem().Kind() != reflect.Struct {
		return false
	}
	df, sf := d.Elem().FieldByName("ObjectMeta"), s.Elem().FieldByName("ObjectMeta")
	if !df.IsValid() || !df.CanSet() || !sf.IsValid() {
		return false
	}
	df.Set(sf)
	return true
}

// clearStatus removes the status of an object.
func clearStatus(obj runtime.Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		delete(u.Object, "status")
		return
	}
	if f, ok := statusField(obj); ok {
		f.Set(reflect.Zero(f.Type()))
	}
}

// copyStatus sets dst's status to src's.
func copyStatus(dst, src runtime.Object) {
	if u, ok := dst.(*unstructured.Unstructured); ok {
		su := src.(*unstructured.Unstructured)
		if st, found := su.Object["status"]; found {
			u.Object["status"] = runtime.DeepCopyJSONValue(st)
		} else {
			delete(u.Object, "status")
		}
		return
	}
	df, ok1 := statusField(dst)
	sf, ok2 := statusField(src)
	if ok1 && ok2 {
		df.Set(sf)
	}
}

// specChanged reports whether anything outside metadata and status differs.
func specChanged(obj, old runtime.Object) bool {
	a, b := obj.DeepCopyObject(), old.DeepCopyObject()
	for _, o := range []runtime.Object{a, b} {
		clearStatus(o)
		if u, ok := o.(*unstructured.Unstructured); ok {
			delete(u.Object, "metadata")
			delete(u.Object, "apiVersion")
			delete(u.Object, "kind")
			continue
		}
		v := reflect.ValueOf(o).Elem()
		for _, name := range []string{"ObjectMeta", "TypeMeta"} {
			if f := v.FieldByName(name); f.IsValid() && f.CanSet() {
				f.Set(reflect.Zero(f.Type()))
			}
		}
	}
	return !equality.Semantic.DeepEqual(a, b)
}
