package evaluate

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Placement is an object put into a session's server for one evaluation
// (Place), or the room made for one (Vacate), with the object of that
// kind and name the server had before, if any: the session's own objects
// (the configuration, its params, the seed) and the server's (its
// bootstrap objects, default ServiceAccounts). Release takes the
// evaluated object out and puts that object back as it was, so that
// every evaluation sees the session as it was set up.
type Placement struct {
	gvr schema.GroupVersionResource
	// obj names the object: kind, namespace and name.
	obj *unstructured.Unstructured
	// displaced is the object the server had, as it was stored; nil
	// when it had none.
	displaced *unstructured.Unstructured
}

// Displaced reports whether the server had an object of that kind and
// name before.
func (p *Placement) Displaced() bool { return p.displaced != nil }

// Place puts u in for the evaluation of its UPDATE, as Preload does, and
// returns the object stored. The placement is not nil whenever something
// was written, errors included: the caller releases it.
func (s *Session) Place(ctx context.Context, u *unstructured.Unstructured) (*Placement, *unstructured.Unstructured, error) {
	return s.place(ctx, u)
}

// place creates u, or replaces the object of that name (which the
// placement keeps), then writes u's status, without admission.
func (s *Session) place(ctx context.Context, u *unstructured.Unstructured) (*Placement, *unstructured.Unstructured, error) {
	obj := u.DeepCopy()
	clearServerSet(obj)
	gvr, err := s.c.target(obj, Request{})
	if err != nil {
		return nil, nil, &ConfigError{Err: err}
	}
	p := &Placement{gvr: gvr, obj: obj}
	ri := on(s.preload, gvr, obj)
	stored, err := ri.Create(ctx, obj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		var cur *unstructured.Unstructured
		if cur, err = ri.Get(ctx, obj.GetName(), metav1.GetOptions{}); err == nil {
			p.displaced = cur
			stored, err = replaceOver(ctx, ri, cur, obj.DeepCopy())
		}
	}
	if err != nil {
		return nil, nil, &ConfigError{Err: err}
	}
	status, ok := obj.Object["status"].(map[string]any)
	if !ok || len(status) == 0 {
		return p, stored, nil
	}
	err = writeStatus(ctx, ri, stored, status)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
		return p, nil, &ConfigError{Err: fmt.Errorf("writing the status: %w", err)}
	}
	stored, err = ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	return p, stored, err
}

// Vacate makes room for the evaluation of u's CREATE: the object of u's
// kind and name, if there is one, is taken out without admission, for
// Release to put back. The placement is not nil whenever something was
// taken out, errors included.
func (s *Session) Vacate(ctx context.Context, u *unstructured.Unstructured) (*Placement, error) {
	obj := u.DeepCopy()
	gvr, err := s.c.target(obj, Request{})
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	p := &Placement{gvr: gvr, obj: obj}
	cur, err := on(s.preload, gvr, obj).Get(ctx, obj.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return p, nil
	case err != nil:
		return nil, err
	}
	p.displaced = cur
	return p, s.remove(ctx, gvr, obj)
}

// Release takes out, without admission, the object the evaluation left
// under p's kind and name, and puts back the object it displaced as it
// was stored (its uid too, unless the evaluation's CREATE took its
// place).
func (s *Session) Release(ctx context.Context, p *Placement) error {
	if p.displaced == nil {
		return s.remove(ctx, p.gvr, p.obj)
	}
	ri := on(s.preload, p.gvr, p.obj)
	for try := 1; ; try++ {
		err := s.putBack(ctx, ri, p)
		if (apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)) && try < putBackTries {
			continue // a controller of the server wrote it meanwhile
		}
		return err
	}
}

// putBackTries bounds the attempts to put a displaced object back while
// a controller of the server writes it (the default ServiceAccount, the
// bootstrap FlowSchemas).
const putBackTries = 5

func (s *Session) putBack(ctx context.Context, ri dynamic.ResourceInterface, p *Placement) error {
	obj := p.displaced.DeepCopy()
	unstructured.RemoveNestedField(obj.Object, "metadata", "managedFields")
	cur, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	switch {
	case err == nil && cur.GetUID() != obj.GetUID():
		if err := s.remove(ctx, p.gvr, obj); err != nil {
			return err
		}
		fallthrough
	case apierrors.IsNotFound(err):
		clearServerSet(obj)
		cur, err = ri.Create(ctx, obj, metav1.CreateOptions{})
	case err == nil:
		cur, err = replaceOver(ctx, ri, cur, obj)
	}
	if err != nil {
		return err
	}
	status, ok := p.displaced.Object["status"].(map[string]any)
	if !ok || len(status) == 0 || reflect.DeepEqual(cur.Object["status"], status) {
		return nil
	}
	err = writeStatus(ctx, ri, cur, status)
	if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
		return nil
	}
	return err
}
