// Package plugindiff runs one admission request through one of admitd's
// compiled-in plugins and through upstream's plugin of the same name
// (k8s.io/kubernetes v1.37.2, on the internal types kube-apiserver decodes
// to) and reports how the two outcomes differ: the decision, the error's
// status (code, reason, message, details) and the object the mutating phase
// leaves. It also checks that admitd's mutator is idempotent, as the chain's
// reinvocation needs. It is test support for the differential tests of
// test/upstream; it is not part of admitd.
package plugindiff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	upinitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/informers"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	// The internal types of the groups the plugins read.
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"

	"github.com/admitd/admitd/pkg/admission"
)

// Upstream builds upstream's plugin name, registered by register, over the
// informers of f, as kube-apiserver's plugin initializer does.
func Upstream(register func(*upadmission.Plugins), name string, f informers.SharedInformerFactory) (upadmission.Interface, error) {
	ps := upadmission.NewPlugins()
	register(ps)
	return ps.InitPlugin(name, io.Reader(nil), initializer{f})
}

type initializer struct {
	f informers.SharedInformerFactory
}

func (i initializer) Initialize(p upadmission.Interface) {
	if w, ok := p.(upinitializer.WantsExternalKubeInformerFactory); ok {
		w.SetExternalKubeInformerFactory(i.f)
	}
}

// Result is what one plugin did with a request.
type Result struct {
	Err    error
	Object runtime.Object // after the mutating phase, in a's version
}

// Describe is a one-line summary of the outcome: the decision, or the
// error's code, reason and message.
func (r Result) Describe() string {
	if r.Err == nil {
		return "admitted"
	}
	var st apierrors.APIStatus
	if errors.As(r.Err, &st) {
		s := st.Status()
		return fmt.Sprintf("%d %s %q", s.Code, s.Reason, s.Message)
	}
	return fmt.Sprintf("not a status: %q", r.Err.Error())
}

// Compare runs a (never modified) through ours and up and returns
// upstream's outcome and the differences, empty when none.
func Compare(ours admission.Handler, up upadmission.Interface, a *admission.Attributes) (Result, []string) {
	o, idem := RunOurs(ours, a)
	u, err := RunUpstream(up, a)
	if err != nil {
		return u, []string{err.Error()}
	}
	var diffs []string
	if idem != "" {
		diffs = append(diffs, idem)
	}
	if got, want := o.Describe(), u.Describe(); got != want {
		diffs = append(diffs, fmt.Sprintf("outcome: admitted = %s\n upstream = %s", got, want))
	} else if !reflect.DeepEqual(status(o.Err), status(u.Err)) {
		diffs = append(diffs, fmt.Sprintf("status: admitd = %+v\n upstream = %+v", status(o.Err), status(u.Err)))
	}
	if got, want := JSON(o.Object), JSON(u.Object); got != want {
		diffs = append(diffs, fmt.Sprintf("object: admitd = %s\n upstream = %s", got, want))
	}
	return u, diffs
}

func status(err error) any {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return st.Status()
	}
	return err
}

// RunOurs runs the mutating phase twice (the second pass must change
// nothing) then the validating phase, on a copy of a.
func RunOurs(p admission.Handler, a *admission.Attributes) (Result, string) {
	c := *a
	c.Record = admission.NewRecord()
	c.Object, c.OldObject = deepCopy(a.Object), deepCopy(a.OldObject)
	if !p.Handles(c.Operation) {
		return Result{Object: c.Object}, ""
	}
	ctx := context.Background()
	idem := ""
	if m, ok := p.(admission.Mutator); ok {
		if err := m.Admit(ctx, &c); err != nil {
			return Result{Err: err, Object: c.Object}, ""
		}
		first := JSON(c.Object)
		err := m.Admit(ctx, &c)
		if again := JSON(c.Object); again != first || err != nil {
			idem = fmt.Sprintf("not idempotent: %s then %s (%v)", first, again, err)
		}
	}
	if v, ok := p.(admission.Validator); ok {
		if err := v.Validate(ctx, &c); err != nil {
			return Result{Err: err, Object: c.Object}, idem
		}
	}
	return Result{Object: c.Object}, idem
}

// RunUpstream runs upstream's plugin on a's objects converted to the
// internal types, and converts the object it leaves back to a's version.
func RunUpstream(p upadmission.Interface, a *admission.Attributes) (Result, error) {
	obj, err := toInternal(a.Object)
	if err != nil {
		return Result{}, err
	}
	old, err := toInternal(a.OldObject)
	if err != nil {
		return Result{}, err
	}
	u := a.UserInfo
	info := &user.DefaultInfo{Name: u.Username, UID: u.UID, Groups: u.Groups}
	ua := upadmission.NewAttributesRecord(obj, old, a.Kind, a.Namespace, a.Name, a.Resource, a.Subresource,
		upadmission.Operation(a.Operation), a.Options, a.DryRun, info)
	ctx := context.Background()
	var res Result
	if p.Handles(ua.GetOperation()) {
		if m, ok := p.(upadmission.MutationInterface); ok {
			res.Err = m.Admit(ctx, ua, nil)
		}
		if v, ok := p.(upadmission.ValidationInterface); ok && res.Err == nil {
			res.Err = v.Validate(ctx, ua, nil)
		}
	}
	res.Object, err = fromInternal(obj, a.Object)
	return res, err
}

func deepCopy(o runtime.Object) runtime.Object {
	if o == nil {
		return nil
	}
	return o.DeepCopyObject()
}

// gvkOf is the version obj is in.
func gvkOf(obj runtime.Object) (schema.GroupVersionKind, error) {
	if gvk := obj.GetObjectKind().GroupVersionKind(); !gvk.Empty() {
		return gvk, nil
	}
	kinds, _, err := legacyscheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	return kinds[0], nil
}

// toInternal converts a versioned object to upstream's internal type.
func toInternal(obj runtime.Object) (runtime.Object, error) {
	if obj == nil {
		return nil, nil
	}
	gvk, err := gvkOf(obj)
	if err != nil {
		return nil, err
	}
	return legacyscheme.Scheme.ConvertToVersion(obj.DeepCopyObject(), schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal})
}

// fromInternal converts an internal object back to like's version.
func fromInternal(obj, like runtime.Object) (runtime.Object, error) {
	if obj == nil {
		return nil, nil
	}
	gvk, err := gvkOf(like)
	if err != nil {
		return nil, err
	}
	return legacyscheme.Scheme.ConvertToVersion(obj, gvk.GroupVersion())
}

// JSON is obj as JSON without apiVersion and kind, for comparing and
// printing objects whose type meta may or may not be set.
func JSON(obj runtime.Object) string {
	if obj == nil {
		return "null"
	}
	obj = obj.DeepCopyObject()
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	b, err := json.Marshal(obj)
	if err != nil {
		return "unmarshalable: " + err.Error()
	}
	return string(b)
}
