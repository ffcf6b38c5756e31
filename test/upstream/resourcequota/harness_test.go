package resourcequota

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	upquota "k8s.io/apiserver/pkg/admission/plugin/resourcequota"
	upconfig "k8s.io/apiserver/pkg/admission/plugin/resourcequota/apis/resourcequota"
	upquotav1 "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	"k8s.io/kubernetes/pkg/quota/v1/evaluator/core"
	"k8s.io/kubernetes/pkg/quota/v1/install"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	ours "github.com/admitd/admitd/pkg/admission/plugins/resourcequota"
	"github.com/admitd/admitd/pkg/features"
	"github.com/admitd/admitd/pkg/quota"
)

var quotasGVR = corev1.SchemeGroupVersion.WithResource("resourcequotas")

// request is one admission request with the quotas of its namespace.
type request struct {
	name        string
	op          admission.Operation
	gvr         schema.GroupVersionResource
	kind        string
	subresource string
	obj, old    runtime.Object
	dryRun      bool
	quotas      []*corev1.ResourceQuota
	limited     []ours.LimitedResource
}

func (r request) attributes() *admission.Attributes {
	m := r.obj.(metav1.Object)
	return &admission.Attributes{Name: m.GetName(), Namespace: "test", Operation: r.op,
		Kind:     schema.GroupVersionKind{Group: r.gvr.Group, Version: r.gvr.Version, Kind: r.kind},
		Resource: r.gvr, Subresource: r.subresource, DryRun: r.dryRun,
		Object: r.obj.DeepCopyObject(), OldObject: deepCopy(r.old), Record: admission.NewRecord()}
}

func deepCopy(o runtime.Object) runtime.Object {
	if o == nil {
		return nil
	}
	return o.DeepCopyObject()
}

// outcome is the decision and the quotas' status.used afterwards, by name.
type outcome struct {
	err  error
	used map[string]corev1.ResourceList
}

var ourOptions = quota.OptionsFor(gates{})

type gates struct{}

func (gates) Enabled(name string) bool { return features.Default(name) }

func runOurs(t testing.TB, r request) outcome {
	c := admissiontest.NewCluster()
	for _, q := range r.quotas {
		c.Add(q.DeepCopy())
	}
	p := ours.New(c, c, quota.NewRegistry(ourOptions), &ours.Configuration{LimitedResources: r.limited})
	a := r.attributes()
	var err error
	if p.Handles(a.Operation) {
		err = p.Validate(context.Background(), a)
	}
	out := outcome{err: err, used: map[string]corev1.ResourceList{}}
	objs, _ := c.ListCachedObjects(context.Background(), quotasGVR, "test", nil)
	for _, o := range objs {
		q := o.(*corev1.ResourceQuota)
		out.used[q.Name] = q.Status.Used
	}
	return out
}

// upstreamConfiguration is kube-apiserver's quota configuration: the core
// evaluators and the ignored resources.
func upstreamConfiguration(t testing.TB, f informers.SharedInformerFactory) upquotav1.Configuration {
	evals, err := core.NewEvaluators(nil, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	return generic.NewConfiguration(evals, install.DefaultIgnoredResources())
}

func runUpstream(t testing.TB, r request) outcome {
	client := fake.NewClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	idx := f.Core().V1().ResourceQuotas().Informer().GetIndexer()
	for _, q := range r.quotas {
		if _, err := client.CoreV1().ResourceQuotas("test").Create(context.Background(), q.DeepCopy(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := idx.Add(q.DeepCopy()); err != nil {
			t.Fatal(err)
		}
	}
	cfg := &upconfig.Configuration{}
	for _, l := range r.limited {
		cfg.LimitedResources = append(cfg.LimitedResources, upconfig.LimitedResource{APIGroup: l.APIGroup, Resource: l.Resource, MatchContains: l.MatchContains, MatchScopes: l.MatchScopes})
	}
	p, err := upquota.NewResourceQuota(cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	p.SetDrainedNotification(stop)
	p.SetExternalKubeClientSet(client)
	p.SetExternalKubeInformerFactory(f)
	p.SetQuotaConfiguration(upstreamConfiguration(t, f))
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	a := r.attributes()
	ua := upadmission.NewAttributesRecord(toInternal(t, a.Object), toInternal(t, a.OldObject), a.Kind, a.Namespace, a.Name, a.Resource, a.Subresource,
		upadmission.Operation(a.Operation), nil, a.DryRun, nil)
	if p.Handles(ua.GetOperation()) {
		err = p.Validate(context.Background(), ua, nil)
	}
	out := outcome{err: err, used: map[string]corev1.ResourceList{}}
	list, lerr := client.CoreV1().ResourceQuotas("test").List(context.Background(), metav1.ListOptions{})
	if lerr != nil {
		t.Fatal(lerr)
	}
	for _, q := range list.Items {
		out.used[q.Name] = q.Status.Used
	}
	return out
}

// toInternal is the object as kube-apiserver's admission sees it: the
// internal version of a built-in kind, custom resources as they are.
func toInternal(t testing.TB, obj runtime.Object) runtime.Object {
	if obj == nil {
		return nil
	}
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return obj.DeepCopyObject()
	}
	out, err := legacyscheme.Scheme.ConvertToVersion(obj.DeepCopyObject(), runtime.InternalGroupVersioner)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// stats counts how the comparisons went.
type stats struct {
	cases, refused, charged, reordered int
	outcomes                           map[string]int
}

func (s *stats) compare(t *testing.T, r request) {
	t.Helper()
	got, want := runOurs(t, r), runUpstream(t, r)
	s.cases++
	if s.outcomes == nil {
		s.outcomes = map[string]int{}
	}
	s.outcomes[shape(want.err)]++
	if want.err != nil {
		s.refused++
	}
	if g, w := describe(got.err), describe(want.err); g != w {
		if !s.sameForSomeOrder(t, r, g, w) {
			t.Errorf("%s: error\n admitd   = %s\n upstream = %s", r.name, g, w)
		}
		return
	}
	changed := false
	for name, w := range want.used {
		if !quota.Equal(got.used[name], w) {
			t.Errorf("%s: quota %s used\n admitd   = %s\n upstream = %s", r.name, name, quota.FormatList(got.used[name]), quota.FormatList(w))
		}
		for _, q := range r.quotas {
			if q.Name == name && !quota.Equal(q.Status.Used, w) {
				changed = true
			}
		}
	}
	if changed {
		s.charged++
	}
}

// sameForSomeOrder checks two refusals naming different quotas. Upstream
// reads the quotas from an informer index in Go's random map order and
// reports the first that refuses; admitd reads them by name. Each refusal
// must then be what the other side says with the quota it names alone.
func (s *stats) sameForSomeOrder(t *testing.T, r request, ours, theirs string) bool {
	t.Helper()
	qo, qt := namedQuota(ours), namedQuota(theirs)
	if qo == "" || qt == "" || qo == qt {
		return false
	}
	if describe(runUpstream(t, r.only(qo)).err) != ours || describe(runOurs(t, r.only(qt)).err) != theirs {
		return false
	}
	s.reordered++
	return true
}

// only is r with the quota named name alone.
func (r request) only(name string) request {
	var qs []*corev1.ResourceQuota
	for _, q := range r.quotas {
		if q.Name == name {
			qs = append(qs, q)
		}
	}
	r.quotas = qs
	return r
}

// namedQuota is the quota a refusal names.
func namedQuota(msg string) string {
	for _, p := range []string{"exceeded quota: ", "status unknown for quota: ", "failed quota: "} {
		if i := strings.Index(msg, p); i >= 0 {
			rest := msg[i+len(p):]
			if j := strings.IndexAny(rest, ",:"); j >= 0 {
				return rest[:j]
			}
		}
	}
	return ""
}

func describe(err error) string {
	if err == nil {
		return "admitted"
	}
	var code int32
	var reason string
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		code, reason = st.Status().Code, string(st.Status().Reason)
	}
	return fmt.Sprintf("%d %s %q", code, reason, err.Error())
}

// shape is the error up to its first colon-separated detail, to count the
// kinds of outcome.
func shape(err error) string {
	if err == nil {
		return "admitted"
	}
	s := err.Error()
	for _, k := range []string{"exceeded quota", "status unknown", "failed quota", "insufficient quota to consume", "insufficient quota to match", "unable to get previous usage", "quota usage is negative"} {
		if strings.Contains(s, k) {
			return k
		}
	}
	return s
}
