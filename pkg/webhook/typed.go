package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
)

// Warnings are sent to the client with the answer (Warning headers).
type Warnings []string

// Validator validates objects of one type, as controller-runtime's
// CustomValidator does, with the object already decoded into T (a pointer
// to a struct, such as *corev1.Pod or *unstructured.Unstructured). A nil
// error admits the request; an error that carries an API status (such as
// apierrors.NewForbidden) is sent with its code and reason, any other error
// as Denied with its text. The warnings are sent either way.
type Validator[T runtime.Object] interface {
	ValidateCreate(ctx context.Context, obj T) (Warnings, error)
	ValidateUpdate(ctx context.Context, oldObj, newObj T) (Warnings, error)
	ValidateDelete(ctx context.Context, obj T) (Warnings, error)
}

// Defaulter sets the defaults of objects of one type, as
// controller-runtime's CustomDefaulter does: it changes obj in place, and
// the answer carries the patch of its changes. Errors are answered as a
// Validator's are.
type Defaulter[T runtime.Object] interface {
	Default(ctx context.Context, obj T) error
}

// WithValidator returns a Handler that decodes the request's objects into
// T and calls v: ValidateCreate on CREATE, ValidateUpdate on UPDATE (old
// and new object), ValidateDelete on DELETE (the old object). CONNECT is
// admitted without a call. An object that cannot be decoded into T is
// answered Errored with code 400. RequestFromContext gives v the request.
func WithValidator[T runtime.Object](v Validator[T]) Handler {
	return HandlerFunc(func(ctx context.Context, req Request) Response {
		ctx = context.WithValue(ctx, requestKey{}, req)
		var warnings Warnings
		var err error
		switch req.Operation {
		case admissionv1.Create:
			obj, derr := decodeTyped[T](req.DecodeObject)
			if derr != nil {
				return Errored(http.StatusBadRequest, derr)
			}
			warnings, err = v.ValidateCreate(ctx, obj)
		case admissionv1.Update:
			obj, derr := decodeTyped[T](req.DecodeObject)
			if derr != nil {
				return Errored(http.StatusBadRequest, derr)
			}
			old, derr := decodeTyped[T](req.DecodeOldObject)
			if derr != nil {
				return Errored(http.StatusBadRequest, derr)
			}
			warnings, err = v.ValidateUpdate(ctx, old, obj)
		case admissionv1.Delete:
			old, derr := decodeTyped[T](req.DecodeOldObject)
			if derr != nil {
				return Errored(http.StatusBadRequest, derr)
			}
			warnings, err = v.ValidateDelete(ctx, old)
		}
		return answer(Allowed(""), err).WithWarnings(warnings...)
	})
}

// WithDefaulter returns a Handler that decodes the request's object into T
// on CREATE and UPDATE, calls d, and admits the request with the patch of
// what d changed (none when nothing changed). DELETE and CONNECT are
// admitted without a call. An object that cannot be decoded into T is
// answered Errored with code 400. RequestFromContext gives d the request.
func WithDefaulter[T runtime.Object](d Defaulter[T]) Handler {
	return HandlerFunc(func(ctx context.Context, req Request) Response {
		if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
			return Allowed("")
		}
		obj, err := decodeTyped[T](req.DecodeObject)
		if err != nil {
			return Errored(http.StatusBadRequest, err)
		}
		original := obj.DeepCopyObject()
		if err := d.Default(context.WithValue(ctx, requestKey{}, req), obj); err != nil {
			return answer(Response{}, err)
		}
		return Patched(original, obj)
	})
}

// requestKey holds the Request in the context a Validator or Defaulter is
// called with.
type requestKey struct{}

// RequestFromContext returns the request a Validator or Defaulter is
// deciding (its user, dry-run flag, namespace and so on).
func RequestFromContext(ctx context.Context) (Request, bool) {
	req, ok := ctx.Value(requestKey{}).(Request)
	return req, ok
}

// decodeTyped decodes with decode into a new T.
func decodeTyped[T runtime.Object](decode func(runtime.Object) error) (T, error) {
	var zero T
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return zero, fmt.Errorf("webhook: %v is not a pointer to a struct", t)
	}
	obj := reflect.New(t.Elem()).Interface().(T)
	if err := decode(obj); err != nil {
		return zero, err
	}
	return obj, nil
}

// answer is ok when err is nil, the error's API status when it carries one,
// and Denied with its text otherwise.
func answer(ok Response, err error) Response {
	if err == nil {
		return ok
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		r := Response{}
		r.Result = &s
		return r
	}
	return Denied(err.Error())
}
