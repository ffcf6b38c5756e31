package podsecurity

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/util/compatibility"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/security/podsecurity"

	"github.com/admitd/admitd/pkg/admission"
	ours "github.com/admitd/admitd/pkg/admission/plugins/podsecurity"
)

// world is the cluster both plugins read: its namespaces and pods, and the
// plugin configuration ("" for none).
type world struct {
	namespaces []*corev1.Namespace
	pods       []*corev1.Pod
	config     string

	nsByName map[string]*corev1.Namespace
	upstream upadmission.ValidationInterface
	ours     admission.Interface
}

// GetNamespace is admitd's namespace lookup over the world.
func (w *world) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	if ns, ok := w.nsByName[name]; ok {
		return ns, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
}

// GetCachedObject and ListCachedObjects are admitd's object cache over the
// world: pods by namespace then name, as the server's cache lists them.
func (w *world) GetCachedObject(ctx context.Context, gvr schema.GroupVersionResource, _, name string) (runtime.Object, error) {
	if gvr.Resource == "namespaces" {
		return w.GetNamespace(ctx, name)
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (w *world) ListCachedObjects(_ context.Context, gvr schema.GroupVersionResource, namespace string, _ labels.Selector) ([]runtime.Object, error) {
	if gvr.Resource != "pods" {
		return nil, nil
	}
	var out []runtime.Object
	for _, p := range w.pods {
		if p.Namespace == namespace {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].(*corev1.Pod).Name < out[j].(*corev1.Pod).Name })
	return out, nil
}

// build makes both plugins over the world. It returns each side's start-up
// error instead, without the wrapping each registry adds.
func (w *world) build(t testing.TB) (upErr, ourErr error) {
	t.Helper()
	w.nsByName = map[string]*corev1.Namespace{}
	client := fake.NewClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	for _, ns := range w.namespaces {
		w.nsByName[ns.Name] = ns
		if err := f.Core().V1().Namespaces().Informer().GetIndexer().Add(ns); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range w.pods {
		if err := f.Core().V1().Pods().Informer().GetIndexer().Add(p); err != nil {
			t.Fatal(err)
		}
	}

	plugins := upadmission.NewPlugins()
	upstream.Register(plugins)
	up, err := plugins.InitPlugin(upstream.PluginName, w.reader(), initializer{client: client, informers: f})
	if err != nil {
		upErr = trimUpstream(err)
	} else {
		w.upstream = up.(upadmission.ValidationInterface)
	}

	r := admission.NewRegistry()
	ours.Register(r, ours.Options{})
	chain, err := r.NewChain([]string{ours.Name}, admission.PluginContext{Namespaces: w, Cache: w}, func(string) io.Reader { return w.reader() })
	if err != nil {
		ourErr = errors.New(strings.TrimPrefix(err.Error(), `couldn't init admission plugin "PodSecurity": `))
	} else {
		w.ours = chain
	}
	return upErr, ourErr
}

func (w *world) reader() io.Reader {
	if w.config == "" {
		return nil
	}
	return strings.NewReader(w.config)
}

// trimUpstream drops the wrapping of upstream's plugin registry.
func trimUpstream(err error) error {
	s := err.Error()
	for _, p := range []string{`couldn't init admission plugin "PodSecurity": `, `failed to initialize admission plugin "PodSecurity": `} {
		s = strings.TrimPrefix(s, p)
	}
	return errors.New(s)
}

// initializer gives upstream's plugin what kube-apiserver gives it: its
// binary's effective version, a client and informers.
type initializer struct {
	client    kubernetes.Interface
	informers informers.SharedInformerFactory
}

func (i initializer) Initialize(p upadmission.Interface) {
	ps := p.(*upstream.Plugin)
	ps.InspectEffectiveVersion(compatibility.DefaultBuildEffectiveVersion())
	ps.SetExternalKubeClientSet(i.client)
	ps.SetExternalKubeInformerFactory(i.informers)
}

// outcome is what a client and the audit log see of one request.
type outcome struct {
	Status      *metav1.Status
	Warnings    []string
	Annotations map[string]string
}

// normal makes empty lists and maps nil, so that DeepEqual compares what
// a client sees.
func (o outcome) normal() outcome {
	if len(o.Warnings) == 0 {
		o.Warnings = nil
	}
	if len(o.Annotations) == 0 {
		o.Annotations = nil
	}
	return o
}

func (o outcome) String() string {
	var b strings.Builder
	if o.Status != nil {
		fmt.Fprintf(&b, "%d %s: %s details=%+v", o.Status.Code, o.Status.Reason, o.Status.Message, o.Status.Details)
	} else {
		b.WriteString("allowed")
	}
	for _, w := range o.Warnings {
		fmt.Fprintf(&b, "\n  warning: %s", w)
	}
	keys := make([]string, 0, len(o.Annotations))
	for k := range o.Annotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  audit %s: %s", k, o.Annotations[k])
	}
	return b.String()
}

// signature is the outcome without pod names and namespaces, to count
// distinct kinds of outcome.
func (o outcome) signature() string {
	s := "allowed"
	if o.Status != nil {
		s = fmt.Sprintf("%d %s", o.Status.Code, o.Status.Reason)
		if i := strings.Index(o.Status.Message, "violates"); i >= 0 {
			s += " " + o.Status.Message[i:]
		}
	}
	keys := make([]string, 0, len(o.Annotations))
	for k := range o.Annotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return fmt.Sprintf("%s warnings=%d audit=%v", s, len(o.Warnings), keys)
}

func statusOf(t testing.TB, err error) *metav1.Status {
	if err == nil {
		return nil
	}
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not an API status", err, err)
	}
	s := se.Status()
	return &s
}

// runOurs sends a through admitd's plugin.
func (w *world) runOurs(t testing.TB, a *admission.Attributes) outcome {
	a.Record = admission.NewRecord()
	err := w.ours.Validate(context.Background(), a)
	o := outcome{Status: statusOf(t, err), Warnings: a.Record.Warnings(), Annotations: map[string]string{}}
	for _, an := range a.Record.Annotations(admission.LevelRequestResponse) {
		o.Annotations[an.Key] = an.Value
	}
	return o.normal()
}

type warnings []string

func (w *warnings) AddWarning(_, text string) { *w = append(*w, text) }

// runUpstream sends a, with its objects converted to internal types, through
// upstream's plugin, with the warning recorder and audit context
// kube-apiserver's handler chain gives a request.
func (w *world) runUpstream(t testing.TB, a *admission.Attributes) outcome {
	var ws warnings
	ctx := warning.WithWarningRecorder(context.Background(), &ws)
	ctx = audit.WithAuditContext(ctx)
	if err := audit.AuditContextFrom(ctx).Init(audit.RequestAuditConfig{Level: auditinternal.LevelMetadata}, nil); err != nil {
		t.Fatal(err)
	}
	attrs := upadmission.NewAttributesRecord(toInternal(t, a.Object), toInternal(t, a.OldObject), a.Kind, a.Namespace, a.Name,
		a.Resource, a.Subresource, upadmission.Operation(a.Operation), a.Options, a.DryRun, userInfo(a.UserInfo))
	err := w.upstream.Validate(ctx, attrs, nil)
	o := outcome{Status: statusOf(t, err), Warnings: []string(ws), Annotations: audit.AuditContextFrom(ctx).GetEventAnnotations()}
	return o.normal()
}

func userInfo(u authenticationv1.UserInfo) user.Info {
	return &user.DefaultInfo{Name: u.Username, UID: u.UID, Groups: u.Groups}
}

// compare runs a through both plugins and reports any difference; it
// returns the outcome's signature.
func (w *world) compare(t testing.TB, name string, a *admission.Attributes) string {
	t.Helper()
	got := w.runOurs(t, cloneAttrs(a))
	want := w.runUpstream(t, cloneAttrs(a))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\nadmitd:   %s\nupstream: %s", name, got, want)
	}
	return got.signature()
}

// cloneAttrs copies a with deep copies of its objects: neither plugin may
// see what the other did.
func cloneAttrs(a *admission.Attributes) *admission.Attributes {
	c := *a
	if a.Object != nil {
		c.Object = a.Object.DeepCopyObject()
	}
	if a.OldObject != nil {
		c.OldObject = a.OldObject.DeepCopyObject()
	}
	return &c
}

// toInternal converts a v1 object to upstream's internal type, as
// kube-apiserver decodes it.
func toInternal(t testing.TB, obj runtime.Object) runtime.Object {
	if obj == nil {
		return nil
	}
	kinds, _, err := legacyscheme.Scheme.ObjectKinds(obj)
	if err != nil {
		t.Fatal(err)
	}
	out, err := legacyscheme.Scheme.ConvertToVersion(obj.DeepCopyObject(), schema.GroupVersion{Group: kinds[0].Group, Version: runtime.APIVersionInternal})
	if err != nil {
		t.Fatalf("converting %v: %v", kinds[0], err)
	}
	return out
}
