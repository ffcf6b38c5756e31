// Package updiff helps the differential tests of compiled-in admission
// plugins: it turns admitd's Attributes into upstream's (objects converted
// to the internal types kube-apiserver's plugins see), converts upstream's
// results back to v1 and compares the errors both sides return.
package updiff

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/events/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"

	"github.com/admitd/admitd/pkg/admission"
)

// ToInternal converts a v1 object to upstream's internal type, as
// kube-apiserver decodes it (nil stays nil).
func ToInternal(t testing.TB, obj runtime.Object) runtime.Object {
	t.Helper()
	if obj == nil {
		return nil
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Empty() {
		kinds, _, err := legacyscheme.Scheme.ObjectKinds(obj)
		if err != nil {
			t.Fatal(err)
		}
		gvk = kinds[0]
	}
	out, err := legacyscheme.Scheme.ConvertToVersion(obj.DeepCopyObject(), schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal})
	if err != nil {
		t.Fatalf("converting %v: %v", gvk, err)
	}
	return out
}

// ToVersion converts an internal object into out (a v1 object).
func ToVersion(t testing.TB, in runtime.Object, out runtime.Object) {
	t.Helper()
	if err := legacyscheme.Scheme.Convert(in, out, nil); err != nil {
		t.Fatalf("converting %T to %T: %v", in, out, err)
	}
}

// Attributes returns upstream's attributes for a, with its objects
// converted to internal types; the caller reads the (possibly mutated)
// objects back from them.
func Attributes(t testing.TB, a *admission.Attributes) upadmission.Attributes {
	t.Helper()
	var u user.Info
	if a.UserInfo.Username != "" || len(a.UserInfo.Groups) > 0 {
		extra := map[string][]string{}
		for k, v := range a.UserInfo.Extra {
			extra[k] = v
		}
		u = &user.DefaultInfo{Name: a.UserInfo.Username, UID: a.UserInfo.UID, Groups: a.UserInfo.Groups, Extra: extra}
	} else {
		u = &user.DefaultInfo{}
	}
	return upadmission.NewAttributesRecord(ToInternal(t, a.Object), ToInternal(t, a.OldObject), a.Kind, a.Namespace, a.Name,
		a.Resource, a.Subresource, upadmission.Operation(a.Operation), a.Options, a.DryRun, u)
}

// Outcome is an error as a client sees it.
type Outcome struct {
	Allowed bool
	Code    int32
	Reason  string
	Message string
	Causes  string
}

func (o Outcome) String() string {
	if o.Allowed {
		return "allowed"
	}
	return fmt.Sprintf("%d %s %q causes=%s", o.Code, o.Reason, o.Message, o.Causes)
}

// OutcomeOf is err as kube-apiserver answers it: a StatusError as is,
// anything else a 500 InternalError.
func OutcomeOf(err error) Outcome {
	if err == nil {
		return Outcome{Allowed: true}
	}
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		se = apierrors.NewInternalError(err)
	}
	o := Outcome{Code: se.ErrStatus.Code, Reason: string(se.ErrStatus.Reason), Message: se.ErrStatus.Message}
	if d := se.ErrStatus.Details; d != nil {
		o.Causes = fmt.Sprintf("%s/%s/%s %v", d.Group, d.Kind, d.Name, d.Causes)
	}
	return o
}
