package certificates

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/component-base/featuregate"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/certificates/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/features"
	upapproval "k8s.io/kubernetes/plugin/pkg/admission/certificates/approval"
	upctbattest "k8s.io/kubernetes/plugin/pkg/admission/certificates/ctbattest"
	upsigning "k8s.io/kubernetes/plugin/pkg/admission/certificates/signing"
	upsubject "k8s.io/kubernetes/plugin/pkg/admission/certificates/subjectrestriction"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/certificateapproval"
	"github.com/admitd/admitd/pkg/admission/plugins/certificatesigning"
	"github.com/admitd/admitd/pkg/admission/plugins/certificatesubjectrestriction"
	"github.com/admitd/admitd/pkg/admission/plugins/clustertrustbundleattest"
)

// policy is what the fake authorizer both plugins ask decides: a check
// whose verb/name key is in allow gets Allow, any other the fallback (Deny
// or NoOpinion); with err set every check fails with that error and an
// Allow, which must not count.
type policy struct {
	allow    map[string]bool
	fallback admission.AuthorizationDecision
	err      error
}

func key(verb, name string) string { return verb + " " + name }

func allowing(verb string, names ...string) policy {
	p := policy{allow: map[string]bool{}, fallback: admission.AuthorizationDeny}
	for _, n := range names {
		p.allow[key(verb, n)] = true
	}
	return p
}

func (p policy) decide(verb, name string) (int, string, error) {
	if p.err != nil {
		return int(admission.AuthorizationAllow), "forced error", p.err
	}
	if p.allow[key(verb, name)] {
		return int(admission.AuthorizationAllow), "", nil
	}
	return int(p.fallback), fmt.Sprintf("no %s", key(verb, name)), nil
}

// check is one authorization question, as both sides record it.
type check struct {
	User                                                         string
	Groups                                                       []string
	Verb, APIGroup, APIVersion, Resource, Subresource, Namespace string
	Name, Path                                                   string
	ResourceRequest                                              bool
}

type upstreamAuthz struct {
	p     policy
	asked *[]check
}

func (z upstreamAuthz) authorizer() authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		*z.asked = append(*z.asked, check{User: a.GetUser().GetName(), Groups: a.GetUser().GetGroups(), Verb: a.GetVerb(),
			APIGroup: a.GetAPIGroup(), APIVersion: a.GetAPIVersion(), Resource: a.GetResource(), Subresource: a.GetSubresource(),
			Namespace: a.GetNamespace(), Name: a.GetName(), Path: a.GetPath(), ResourceRequest: a.IsResourceRequest()})
		d, reason, err := z.p.decide(a.GetVerb(), a.GetName())
		return authorizer.Decision(d), reason, err
	})
}

type ourAuthz struct {
	p     policy
	asked *[]check
}

func (z ourAuthz) Authorize(_ context.Context, a admission.AuthorizationAttributes) (admission.AuthorizationDecision, string, error) {
	*z.asked = append(*z.asked, check{User: a.User.Username, Groups: a.User.Groups, Verb: a.Verb, APIGroup: a.APIGroup,
		APIVersion: a.APIVersion, Resource: a.Resource, Subresource: a.Subresource, Namespace: a.Namespace, Name: a.Name,
		Path: a.Path, ResourceRequest: a.ResourceRequest})
	d, reason, err := z.p.decide(a.Verb, a.Name)
	return admission.AuthorizationDecision(d), reason, err
}

// request is one admission request, in admitd's (versioned) objects.
type request struct {
	op          admission.Operation
	resource    schema.GroupVersionResource
	subresource string
	name        string
	obj, old    runtime.Object
	user        string
	groups      []string
}

func (r request) String() string {
	return fmt.Sprintf("%s %s/%s name=%q user=%q obj=%s old=%s", r.op, r.resource, r.subresource, r.name, r.user, dump(r.obj), dump(r.old))
}

// object turns a typed nil or untyped nil into a nil runtime.Object.
func object(o any) runtime.Object {
	if o == nil {
		return nil
	}
	ro := o.(runtime.Object)
	if reflect.ValueOf(ro).IsNil() {
		return nil
	}
	return ro
}

func dump(o runtime.Object) string {
	if o == nil {
		return "nil"
	}
	return fmt.Sprintf("%+v", o)
}

// pluginName selects the plugin pair.
type pluginName string

const (
	approval pluginName = "CertificateApproval"
	signing  pluginName = "CertificateSigning"
	subject  pluginName = "CertificateSubjectRestriction"
	ctb      pluginName = "ClusterTrustBundleAttest"
)

func gate(enabled bool) featuregate.FeatureGate {
	g := featuregate.NewFeatureGate()
	if err := g.Add(map[featuregate.Feature]featuregate.FeatureSpec{features.ClusterTrustBundle: {Default: enabled, PreRelease: featuregate.Beta}}); err != nil {
		panic(err)
	}
	return g
}

// pair builds both plugins over the same policy.
func pair(t testing.TB, name pluginName, p policy, gateOn bool, upAsked, ourAsked *[]check) (upadmission.ValidationInterface, admission.Validator) {
	upz := upstreamAuthz{p, upAsked}.authorizer()
	oz := ourAuthz{p, ourAsked}
	switch name {
	case approval:
		u := upapproval.NewPlugin()
		u.SetUnconditionalAuthorizer(upz)
		must(t, u.ValidateInitialization())
		return u, certificateapproval.New(oz)
	case signing:
		u := upsigning.NewPlugin()
		u.SetUnconditionalAuthorizer(upz)
		must(t, u.ValidateInitialization())
		return u, certificatesigning.New(oz)
	case subject:
		u := upsubject.NewPlugin()
		must(t, u.ValidateInitialization())
		return u, &certificatesubjectrestriction.Plugin{}
	case ctb:
		u := upctbattest.NewPlugin()
		u.SetUnconditionalAuthorizer(upz)
		u.InspectFeatureGates(gate(gateOn))
		must(t, u.ValidateInitialization())
		return u, clustertrustbundleattest.New(oz, gateOn)
	}
	t.Fatalf("unknown plugin %s", name)
	return nil, nil
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// toInternal converts a versioned object to upstream's internal type, as
// kube-apiserver decodes it.
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

// outcome is what a plugin did with a request.
type outcome struct {
	handles bool
	err     string
	code    int32
	reason  string
	asked   []check
}

// compare runs the request through both plugins and reports differences.
func compare(t testing.TB, name pluginName, p policy, gateOn bool, r request) (outcome, bool) {
	var upAsked, ourAsked []check
	up, ours := pair(t, name, p, gateOn, &upAsked, &ourAsked)
	uinfo := &user.DefaultInfo{Name: r.user, UID: r.user + "-uid", Groups: r.groups}
	var upOut, ourOut outcome
	upOut.handles = up.(upadmission.Interface).Handles(upadmission.Operation(r.op))
	if upOut.handles {
		attrs := upadmission.NewAttributesRecord(toInternal(t, r.obj), toInternal(t, r.old), schema.GroupVersionKind{}, "", r.name,
			r.resource, r.subresource, upadmission.Operation(r.op), nil, false, uinfo)
		upOut.setErr(up.Validate(context.Background(), attrs, nil))
	}
	ourOut.handles = ours.Handles(r.op)
	if ourOut.handles {
		a := &admission.Attributes{Name: r.name, Resource: r.resource, Subresource: r.subresource, Operation: r.op,
			Object: r.obj, OldObject: r.old, Record: &admission.Record{},
			UserInfo: authenticationv1.UserInfo{Username: r.user, UID: r.user + "-uid", Groups: r.groups}}
		ourOut.setErr(ours.Validate(context.Background(), a))
	}
	upOut.asked, ourOut.asked = upAsked, ourAsked
	if !reflect.DeepEqual(upOut, ourOut) {
		t.Errorf("%s, policy %+v, gate %v, %s:\n upstream %+v\n admitd   %+v", name, p, gateOn, r, upOut, ourOut)
		return upOut, false
	}
	return upOut, true
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
