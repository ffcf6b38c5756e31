package ownerreferences

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/restmapper"
	coretesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	upgc "k8s.io/kubernetes/plugin/pkg/admission/gc"

	"github.com/admitd/admitd/pkg/admission"
	ours "github.com/admitd/admitd/pkg/admission/plugins/ownerreferencespermissionenforcement"
)

// decider answers one authorization question.
type decider func(c check) (admission.AuthorizationDecision, string, error)

// check is one authorization question, as both sides record it.
type check struct {
	User                                                         string
	Verb, APIGroup, APIVersion, Resource, Subresource, Namespace string
	Name, Path                                                   string
	ResourceRequest                                              bool
}

func (c check) String() string {
	return fmt.Sprintf("%s %s %s/%s %s/%s ns=%q name=%q", c.User, c.Verb, c.APIGroup, c.APIVersion, c.Resource, c.Subresource, c.Namespace, c.Name)
}

// discoveryMapper is client-go's discovery REST mapper over a fake
// discovery listing lists.
func discoveryMapper(t testing.TB, lists []*metav1.APIResourceList) meta.RESTMapper {
	d := &fakediscovery.FakeDiscovery{Fake: &coretesting.Fake{}}
	d.Resources = lists
	res, err := restmapper.GetAPIGroupResources(d)
	if err != nil {
		t.Fatal(err)
	}
	return restmapper.NewDiscoveryRESTMapper(res)
}

// request is one admission request, in admitd's (versioned) objects.
type request struct {
	op          admission.Operation
	resource    schema.GroupVersionResource
	subresource string
	namespace   string
	name        string
	obj, old    runtime.Object
	user        string
}

func (r request) String() string {
	return fmt.Sprintf("%s %s/%s ns=%q name=%q user=%q\n  obj refs %s\n  old refs %s", r.op, r.resource, r.subresource, r.namespace, r.name, r.user, refs(r.obj), refs(r.old))
}

func refs(o runtime.Object) string {
	if o == nil {
		return "nil"
	}
	m, err := meta.Accessor(o)
	if err != nil {
		return "no metadata"
	}
	s := ""
	for _, r := range m.GetOwnerReferences() {
		b := "nil"
		if r.BlockOwnerDeletion != nil {
			b = fmt.Sprint(*r.BlockOwnerDeletion)
		}
		s += fmt.Sprintf("{%s %s %s uid=%s block=%s} ", r.APIVersion, r.Kind, r.Name, r.UID, b)
	}
	return s
}

// toInternal converts a versioned object to upstream's internal type.
func toInternal(t testing.TB, obj runtime.Object) runtime.Object {
	if obj == nil {
		return nil
	}
	gvks, _, err := legacyscheme.Scheme.ObjectKinds(obj)
	if err != nil {
		t.Fatal(err)
	}
	out, err := legacyscheme.Scheme.ConvertToVersion(obj.DeepCopyObject(), schema.GroupVersion{Group: gvks[0].Group, Version: runtime.APIVersionInternal})
	if err != nil {
		t.Fatalf("converting %v: %v", gvks[0], err)
	}
	return out
}

// upstreamPlugin builds upstream's plugin as kube-apiserver does: through
// its registration and the generic initializer.
func upstreamPlugin(t testing.TB, authz authorizer.Authorizer, mapper meta.RESTMapper) upadmission.ValidationInterface {
	plugins := upadmission.NewPlugins()
	upgc.Register(plugins)
	p, err := plugins.InitPlugin(upgc.PluginName, nil, initializer.New(nil, nil, nil, authz, nil, nil, nil, mapper))
	if err != nil {
		t.Fatal(err)
	}
	return p.(upadmission.ValidationInterface)
}

type outcome struct {
	handles bool
	err     string
	code    int32
	reason  string
	asked   []check
}

func (o *outcome) setErr(err error) {
	if err == nil {
		return
	}
	o.err = err.Error()
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		o.code, o.reason = se.Status().Code, string(se.Status().Reason)
	}
}

// compare runs r through both plugins and reports differences.
func compare(t testing.TB, decide decider, upMapper meta.RESTMapper, ourMapper ours.RESTMapper, r request) (outcome, bool) {
	var upOut, ourOut outcome
	upAuthz := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		c := check{User: a.GetUser().GetName(), Verb: a.GetVerb(), APIGroup: a.GetAPIGroup(), APIVersion: a.GetAPIVersion(),
			Resource: a.GetResource(), Subresource: a.GetSubresource(), Namespace: a.GetNamespace(), Name: a.GetName(),
			Path: a.GetPath(), ResourceRequest: a.IsResourceRequest()}
		upOut.asked = append(upOut.asked, c)
		d, reason, err := decide(c)
		return authorizer.Decision(d), reason, err
	})
	ourAuthz := admission.AuthorizerFunc(func(_ context.Context, a admission.AuthorizationAttributes) (admission.AuthorizationDecision, string, error) {
		c := check{User: a.User.Username, Verb: a.Verb, APIGroup: a.APIGroup, APIVersion: a.APIVersion, Resource: a.Resource,
			Subresource: a.Subresource, Namespace: a.Namespace, Name: a.Name, Path: a.Path, ResourceRequest: a.ResourceRequest}
		ourOut.asked = append(ourOut.asked, c)
		return decide(c)
	})
	up := upstreamPlugin(t, upAuthz, upMapper)
	op := ours.New(ourAuthz, ourMapper)

	upOut.handles = up.(upadmission.Interface).Handles(upadmission.Operation(r.op))
	if upOut.handles {
		attrs := upadmission.NewAttributesRecord(toInternal(t, r.obj), toInternal(t, r.old), schema.GroupVersionKind{}, r.namespace, r.name,
			r.resource, r.subresource, upadmission.Operation(r.op), nil, false, &user.DefaultInfo{Name: r.user})
		upOut.setErr(up.Validate(context.Background(), attrs, nil))
	}
	ourOut.handles = op.Handles(r.op)
	if ourOut.handles {
		a := &admission.Attributes{Name: r.name, Namespace: r.namespace, Resource: r.resource, Subresource: r.subresource,
			Operation: r.op, Object: r.obj, OldObject: r.old, Record: &admission.Record{},
			UserInfo: authenticationv1.UserInfo{Username: r.user}}
		ourOut.setErr(op.Validate(context.Background(), a))
	}
	if !reflect.DeepEqual(upOut, ourOut) {
		t.Errorf("%s:\n upstream %+v\n admitd   %+v", r, upOut, ourOut)
		return upOut, false
	}
	return upOut, true
}
