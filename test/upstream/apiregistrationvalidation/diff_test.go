// Package apiregistrationvalidation compares admitd's APIService strategy
// (internal/registry: decoding defaults, then the preparation and
// validation of a create, an update or a status write) with
// kube-apiserver's: kube-aggregator's v1 defaulting, then the strategies of
// k8s.io/kube-aggregator/pkg/registry/apiservice (and its status strategy)
// through k8s.io/apiserver's rest.ValidateCreate and rest.ValidateUpdate,
// on the internal objects kube-apiserver decodes, with every feature gate
// at its default.
//
// Compared: the defaulted object, the object as prepared for storage (the
// Local condition's transition time cleared on both sides: each takes its
// own clock), every error (in order, but for metadata errors on update,
// compared as sets as upstream checks metadata twice) and the warnings
// (none on either side).
package apiregistrationvalidation

import (
	"context"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration/install"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kube-aggregator/pkg/registry/apiservice"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/test/upstream/internal/quietklog"
	"github.com/admitd/admitd/test/upstream/internal/strategydiff"
)

func TestMain(m *testing.M) {
	quietklog.SilenceErrors()
	// kube-apiserver serves APIServices from the aggregator's scheme; the
	// comparison converts through legacyscheme.
	install.Install(legacyscheme.Scheme)
	os.Exit(m.Run())
}

// withCreate gives upstream's status strategy, which has no create side
// (a status write is never a create), the create methods
// strategydiff.Strategy asks for; they are never called.
type withCreate struct{ rest.UpdateResetFieldsStrategy }

func (withCreate) GenerateName(base string) string                           { return base }
func (withCreate) PrepareForCreate(context.Context, runtime.Object)          {}
func (withCreate) Validate(context.Context, runtime.Object) field.ErrorList  { return nil }
func (withCreate) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

// upstreamStrategy is the APIService strategy, or its status strategy for
// a status write, with its resource and a new v1 object.
func upstreamStrategy(_ runtime.Object, status bool) (strategydiff.Strategy, string, runtime.Object) {
	if status {
		return withCreate{UpdateResetFieldsStrategy: apiservice.NewStatusStrategy(legacyscheme.Scheme)}, "apiservices", &apiregistrationv1.APIService{}
	}
	return apiservice.NewStrategy(legacyscheme.Scheme), "apiservices", &apiregistrationv1.APIService{}
}

var differ = strategydiff.Differ{Group: apiregistrationv1.GroupName, Strategy: upstreamStrategy,
	Normalize: func(upstream, admitd runtime.Object) {
		for _, obj := range []runtime.Object{upstream, admitd} {
			if svc, ok := obj.(*apiregistrationv1.APIService); ok {
				for i := range svc.Status.Conditions {
					svc.Status.Conditions[i].LastTransitionTime.Reset()
				}
			}
		}
	}}

type (
	write = strategydiff.Write
	tally = strategydiff.Tally
)

func compare(t *testing.T, cat *registry.Catalogue, w write, c *tally) {
	t.Helper()
	differ.Compare(t, cat, w, c)
}
