// Package certificatesvalidation compares admitd's ClusterTrustBundle,
// PodCertificateRequest and CertificateSigningRequest strategies
// (internal/registry: decoding defaults, then the preparation and
// validation of a create, an update or a status or approval write, and the
// signer check a request's status write needs) with kube-apiserver's: v1
// defaulting (pkg/apis/certificates/v1), then the strategies of
// pkg/registry/certificates/{clustertrustbundle, podcertificaterequest,
// certificates} (the pod request's status strategy with its "sign"
// authorization, the signing request's status and approval strategies)
// through k8s.io/apiserver's rest.ValidateCreate and
// rest.ValidateUpdate, which add the common metadata checks and 1.37's
// declarative validation, on the internal objects kube-apiserver decodes,
// with every feature gate at its default.
//
// Compared: the defaulted object, the object as prepared for storage (the
// condition times both sides stamp with now aside), every
// error (type, field, detail, message; in order, but for metadata errors
// on update, compared as sets as upstream checks metadata several times,
// and for user annotation and duplicate trust anchor errors, which
// upstream reports in map order) and the warnings (none on either side).
package certificatesvalidation

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/certificates/install"
	csrregistry "k8s.io/kubernetes/pkg/registry/certificates/certificates"
	"k8s.io/kubernetes/pkg/registry/certificates/clustertrustbundle"
	"k8s.io/kubernetes/pkg/registry/certificates/podcertificaterequest"
	"k8s.io/utils/clock"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/test/upstream/internal/quietklog"
	"github.com/admitd/admitd/test/upstream/internal/updiff"
)

func TestMain(m *testing.M) {
	quietklog.SilenceErrors()
	os.Exit(m.Run())
}

// writer is the user of every write; signers says which signer names it
// may "sign" for (by name or by domain wildcard), on both sides.
const writer = "signer-controller"

var signable = []string{"example.com/*", "other.io/signer1", "kubernetes.io/kube-apiserver-client-pod"}

func mayDo(verb, name string) bool {
	return verb == "sign" && slices.Contains(signable, name)
}

// signerAuthorizer answers upstream's signer checks with mayDo.
type signerAuthorizer struct{}

func (signerAuthorizer) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetUser().GetName() == writer && a.GetAPIGroup() == "certificates.k8s.io" && a.GetResource() == "signers" && mayDo(a.GetVerb(), a.GetName()) {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// strategy is upstream's create and update strategy of one kind.
type strategy interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
}

var pcrStrategy = podcertificaterequest.NewStrategy()

func upstreamStrategy(obj runtime.Object, subresource string) (s strategy, resource string, blank runtime.Object) {
	switch obj.(type) {
	case *certificatesv1.CertificateSigningRequest:
		s = csrregistry.Strategy
		switch subresource {
		case "status":
			s = csrregistry.StatusStrategy
		case "approval":
			s = csrregistry.ApprovalStrategy
		}
		return s, "certificatesigningrequests", &certificatesv1.CertificateSigningRequest{}
	case *certificatesv1.ClusterTrustBundle:
		return clustertrustbundle.Strategy, "clustertrustbundles", &certificatesv1.ClusterTrustBundle{}
	case *certificatesv1.PodCertificateRequest:
		if subresource == "status" {
			return podcertificaterequest.NewStatusStrategy(pcrStrategy, signerAuthorizer{}, clock.RealClock{}), "podcertificaterequests",
				&certificatesv1.PodCertificateRequest{}
		}
		return pcrStrategy, "podcertificaterequests", &certificatesv1.PodCertificateRequest{}
	}
	panic(fmt.Sprintf("not a certificates object: %T", obj))
}

// write is one create (old nil), update, status or approval write, in v1 objects
// as a client sends them; defaulted says whether decoding defaults apply
// (upstream's own validation tables hand their objects to validation as
// they are).
type write struct {
	name      string
	obj, old  runtime.Object
	status    bool
	approval  bool
	defaulted bool
}

func (w write) subresource() string {
	switch {
	case w.status:
		return "status"
	case w.approval:
		return "approval"
	}
	return ""
}

// outcome is what one side made of a write.
type outcome struct {
	defaulted, prepared runtime.Object
	errs                field.ErrorList
	warnings            []string
}

func requestContext(resource, subresource string, create bool) context.Context {
	verb := "update"
	if create {
		verb = "create"
	}
	ctx := genericapirequest.WithRequestInfo(context.Background(), &genericapirequest.RequestInfo{IsResourceRequest: true,
		APIGroup: certificatesv1.GroupName, APIVersion: "v1", Resource: resource, Subresource: subresource, Verb: verb})
	return genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: writer})
}

// upstream runs kube-apiserver's steps: v1 defaulting on decode (of the
// sent object only: the stored one was defaulted when written), then the
// strategy on the internal objects; warnings only for a valid write.
func upstream(t *testing.T, w write) outcome {
	t.Helper()
	obj := w.obj.DeepCopyObject()
	if w.defaulted {
		legacyscheme.Scheme.Default(obj)
	}
	s, resource, prepared := upstreamStrategy(obj, w.subresource())
	ctx := requestContext(resource, w.subresource(), w.old == nil)
	in := updiff.ToInternal(t, obj)
	var out outcome
	if w.old == nil {
		s.PrepareForCreate(ctx, in)
		if out.errs = rest.ValidateCreate(ctx, in, s); len(out.errs) == 0 {
			out.warnings = s.WarningsOnCreate(ctx, in)
		}
	} else {
		old := updiff.ToInternal(t, w.old)
		s.PrepareForUpdate(ctx, in, old)
		if out.errs = rest.ValidateUpdate(ctx, in, old, s); len(out.errs) == 0 {
			out.warnings = s.WarningsOnUpdate(ctx, in, old)
		}
	}
	updiff.ToVersion(t, in, prepared)
	out.defaulted, out.prepared = obj, prepared
	return out
}

// ours runs admitd's: the catalogue's defaulting on decode, then the
// preparation (a create recording the writer, as the server does) and
// validation of the write, then the signer check the server runs after
// validation, answered by mayDo.
func ours(t *testing.T, cat *registry.Catalogue, w write) outcome {
	t.Helper()
	obj := w.obj.DeepCopyObject()
	kinds, _, err := registry.Scheme().ObjectKinds(obj)
	if err != nil {
		t.Fatal(err)
	}
	res, ok := cat.LookupKind(kinds[0])
	if !ok {
		t.Fatalf("no resource for %v", kinds[0])
	}
	if w.defaulted {
		res.Default(obj)
	}
	out := outcome{defaulted: obj.DeepCopyObject()}
	var old runtime.Object
	if w.old == nil {
		registry.PrepareForCreateBy(res, obj, authenticationv1.UserInfo{Username: writer})
		out.errs = registry.PrepareCreate(res, obj)
	} else {
		old = w.old.DeepCopyObject()
		obj = registry.PrepareForUpdate(res, w.subresource(), obj, old)
		out.errs = res.ValidateSubresourceChange(w.subresource(), obj, old)
		if c := res.SignerCheckFor(w.subresource(), obj, old); len(out.errs) == 0 && c != nil && !signerAllowed(c) {
			out.errs = c.Refused(writer)
		}
	}
	if len(out.errs) == 0 && w.subresource() == "" {
		out.warnings = res.Warnings(obj, old)
	}
	out.prepared = obj
	return out
}

// signerAllowed is the server's check: the signer's name, then its domain
// wildcard.
func signerAllowed(c *registry.SignerCheck) bool {
	domain, _, _ := strings.Cut(c.Signer, "/")
	return mayDo(c.Verb, c.Signer) || mayDo(c.Verb, domain+"/*")
}

// tally counts what the comparisons saw.
type tally struct {
	creates, updates, subresourceWrites, refused, accepted, mismatches int
	firstErrors                                                        map[string]int
}

func (c *tally) String() string {
	var lines []string
	for k, n := range c.firstErrors {
		lines = append(lines, fmt.Sprintf("  %5d refused first with %s", n, k))
	}
	slices.Sort(lines)
	return fmt.Sprintf("%d writes (%d creates, %d updates, %d status or approval writes): %d refused, %d accepted, %d mismatches\n%s",
		c.creates+c.updates+c.subresourceWrites, c.creates, c.updates, c.subresourceWrites, c.refused, c.accepted, c.mismatches,
		strings.Join(lines, "\n"))
}

func (c *tally) count(w write, o outcome) {
	switch {
	case w.old == nil:
		c.creates++
	case w.subresource() != "":
		c.subresourceWrites++
	default:
		c.updates++
	}
	if len(o.errs) == 0 {
		c.accepted++
		return
	}
	c.refused++
	if c.firstErrors == nil {
		c.firstErrors = map[string]int{}
	}
	kind := fmt.Sprintf("%T", w.obj)[len("*v1."):]
	c.firstErrors[fmt.Sprintf("%s %s %s", kind, o.errs[0].Type, updiff.Indexless(o.errs[0].Field))]++
}

func compare(t *testing.T, cat *registry.Catalogue, w write, c *tally) {
	t.Helper()
	up, our := upstream(t, w), ours(t, cat, w)
	c.count(w, up)
	var diffs []string
	if d := cmp.Diff(up.defaulted, our.defaulted); d != "" {
		diffs = append(diffs, "defaulted object:\n"+d)
	}
	clearTypeMeta(up.prepared, our.prepared)
	clearNewConditionTimes(up.prepared, our.prepared)
	if d := cmp.Diff(up.prepared, our.prepared); d != "" {
		diffs = append(diffs, "prepared object:\n"+d)
	}
	if d := cmp.Diff(describe(up.errs, w.old != nil), describe(our.errs, w.old != nil)); d != "" {
		diffs = append(diffs, "errors:\n"+d)
	}
	if d := cmp.Diff(up.warnings, our.warnings); d != "" {
		diffs = append(diffs, "warnings:\n"+d)
	}
	if len(diffs) > 0 {
		c.mismatches++
		t.Errorf("%s: differs (-upstream +admitd):\n%s\nsent: %+v\nold: %+v", w.name, strings.Join(diffs, "\n"), w.obj, w.old)
	}
}

// described are a write's errors as compared: as updiff.Describe has them,
// but for the errors upstream reports in map order (user annotation keys,
// duplicate trust anchors), compared as a set.
type described struct {
	updiff.Described
	Unordered []string
}

func describe(errs field.ErrorList, update bool) described {
	var rest, unordered field.ErrorList
	for _, e := range errs {
		e = withoutNow(e)
		if strings.HasSuffix(e.Field, ".unverifiedUserAnnotations") || strings.Contains(e.Detail, "duplicate trust anchor") {
			unordered = append(unordered, e)
		} else {
			rest = append(rest, e)
		}
	}
	out := described{Described: updiff.Describe(rest, update)}
	for _, e := range unordered {
		out.Unordered = append(out.Unordered, e.Error())
	}
	slices.Sort(out.Unordered)
	return out
}

func clearTypeMeta(objs ...runtime.Object) {
	for _, o := range objs {
		o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	}
}
