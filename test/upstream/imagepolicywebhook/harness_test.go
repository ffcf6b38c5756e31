package imagepolicywebhook

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	upimagepolicy "k8s.io/kubernetes/plugin/pkg/admission/imagepolicy"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/imagepolicywebhook"
	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

// reply is one answer of the backend.
type reply struct {
	code        int    // HTTP status; 0 is 200
	raw         string // the body as is, when set (with contentType)
	contentType string
	allowed     bool
	reason      string
	annotations map[string]string
	delay       time.Duration
}

// script answers the n-th call (from 0) a plugin makes for one request.
type script func(n int, rev imagepolicyv1alpha1.ImageReview) reply

// backend is a real HTTPS image policy backend on 127.0.0.1 that requires
// a client certificate from its CA. One request runs through one plugin
// at a time: reset sets the script and clears what was received.
type backend struct {
	*webhooktest.Server
	mu     sync.Mutex
	script script
	bodies []string
}

func newBackend(t testing.TB, requireClientCert bool) *backend {
	b := &backend{}
	s, err := webhooktest.NewUnstartedServer(nil, http.HandlerFunc(b.serve))
	if err != nil {
		t.Fatal(err)
	}
	if requireClientCert {
		s.TLS.ClientCAs = s.CA.Pool()
		s.TLS.ClientAuth = tls.RequireAndVerifyClientCert
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	b.Server = s
	return b
}

func (b *backend) reset(s script) {
	b.mu.Lock()
	b.script, b.bodies = s, nil
	b.mu.Unlock()
}

func (b *backend) received() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.bodies...)
}

func (b *backend) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var rev imagepolicyv1alpha1.ImageReview
	_ = json.Unmarshal(body, &rev)
	b.mu.Lock()
	n := len(b.bodies)
	b.bodies = append(b.bodies, string(body))
	s := b.script
	b.mu.Unlock()
	rp := reply{allowed: true}
	if s != nil {
		rp = s(n, rev)
	}
	time.Sleep(rp.delay)
	code := rp.code
	if code == 0 {
		code = http.StatusOK
	}
	if rp.raw != "" || rp.contentType != "" {
		if rp.contentType != "" {
			w.Header().Set("Content-Type", rp.contentType)
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, rp.raw)
		return
	}
	if code != http.StatusOK {
		http.Error(w, "HTTP Error", code)
		return
	}
	rev.Status = imagepolicyv1alpha1.ImageReviewStatus{Allowed: rp.allowed, Reason: rp.reason, AuditAnnotations: rp.annotations}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(struct {
		APIVersion string                                `json:"apiVersion"`
		Kind       string                                `json:"kind"`
		Status     imagepolicyv1alpha1.ImageReviewStatus `json:"status"`
	}{"imagepolicy.k8s.io/v1alpha1", "ImageReview", rev.Status})
}

// trusted is the kubeconfig a backend is meant to be called with.
func (b *backend) trusted(t testing.TB) string { return b.kubeconfig(t, b.CA.CertPEM, b.CA) }

// kubeconfig writes a kubeconfig naming the backend, trusting ca (nil:
// none) and presenting a client certificate issued by issuer (nil: none).
func (b *backend) kubeconfig(t testing.TB, ca []byte, issuer *webhooktest.CA) string {
	u := &clientcmdapi.AuthInfo{}
	if issuer != nil {
		cert, key, err := issuer.IssueClientPEM("kube-apiserver")
		if err != nil {
			t.Fatal(err)
		}
		u.ClientCertificateData, u.ClientKeyData = cert, key
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["policy"] = &clientcmdapi.Cluster{Server: b.URL + "/review", CertificateAuthorityData: ca}
	cfg.AuthInfos["apiserver"] = u
	cfg.Contexts["default"] = &clientcmdapi.Context{Cluster: "policy", AuthInfo: "apiserver"}
	cfg.CurrentContext = "default"
	path := filepath(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// settings are the plugin configuration's numbers.
type settings struct {
	allowTTL, denyTTL, retryBackoff int64
	defaultAllow                    bool
}

func (s settings) config(kubeconfig string) string {
	return fmt.Sprintf("imagePolicy:\n  kubeConfigFile: %q\n  allowTTL: %d\n  denyTTL: %d\n  retryBackoff: %d\n  defaultAllow: %v\n",
		kubeconfig, s.allowTTL, s.denyTTL, s.retryBackoff, s.defaultAllow)
}

// pair builds upstream's plugin and admitd's from the same configuration.
type pair struct {
	up   *upimagepolicy.Plugin
	ours *imagepolicywebhook.Plugin
}

func newPair(t testing.TB, config string) pair {
	t.Helper()
	up, err := upimagepolicy.NewImagePolicyWebhook(strings.NewReader(config))
	if err != nil {
		t.Fatalf("upstream: %v", err)
	}
	ours, err := buildOurs(config)
	if err != nil {
		t.Fatalf("admitd: %v", err)
	}
	return pair{up, ours}
}

func buildOurs(config string) (*imagepolicywebhook.Plugin, error) {
	c, err := imagepolicywebhook.LoadConfiguration(strings.NewReader(config))
	if err != nil {
		return nil, err
	}
	return imagepolicywebhook.New(*c)
}

// request is one admission request, in admitd's (versioned) objects.
type request struct {
	op          admission.Operation
	resource    schema.GroupVersionResource
	subresource string
	namespace   string
	obj         runtime.Object
	timeout     time.Duration // of the request's context; 0: none
}

func (r request) String() string {
	return fmt.Sprintf("%s %s/%s ns=%q obj=%+v", r.op, r.resource, r.subresource, r.namespace, r.obj)
}

// outcome is what one plugin did with a request.
type outcome struct {
	Handles     bool
	Err         string
	Code        int32
	Reason      metav1.StatusReason
	Sent        []string          // the bodies the backend received
	Audit       map[string]string // audit annotations
	Annotations map[string]string // of the pod the later validating plugins see
}

func (o *outcome) setErr(err error) {
	if err == nil {
		return
	}
	o.Err = err.Error()
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		o.Code, o.Reason = st.Status().Code, st.Status().Reason
	}
}

// recording keeps the audit annotations upstream's plugin adds (those its
// attributes accept).
type recording struct {
	upadmission.Attributes
	audit map[string]string
}

func (r recording) AddAnnotation(k, v string) error {
	if err := r.Attributes.AddAnnotation(k, v); err != nil {
		return err
	}
	r.audit[k] = v
	return nil
}

func name(obj runtime.Object) string {
	if p, ok := obj.(*corev1.Pod); ok {
		return p.Name
	}
	return ""
}

func (p pair) runUpstream(t testing.TB, b *backend, s script, r request) outcome {
	b.reset(s)
	o := outcome{Audit: map[string]string{}}
	o.Handles = p.up.Handles(upadmission.Operation(r.op))
	obj := toInternal(t, r.obj)
	if o.Handles {
		attrs := recording{upadmission.NewAttributesRecord(obj, nil, schema.GroupVersionKind{}, r.namespace, name(r.obj), r.resource,
			r.subresource, upadmission.Operation(r.op), nil, false, &user.DefaultInfo{Name: "u"}), o.Audit}
		ctx, cancel := contextFor(r)
		o.setErr(p.up.Validate(ctx, attrs, nil))
		cancel()
	}
	if pod, ok := obj.(*api.Pod); ok {
		o.Annotations = pod.Annotations
	}
	o.Sent = b.received()
	return o
}

func (p pair) runOurs(b *backend, s script, r request) outcome {
	b.reset(s)
	o := outcome{Audit: map[string]string{}}
	o.Handles = p.ours.Handles(r.op)
	obj := r.obj.DeepCopyObject()
	if o.Handles {
		a := &admission.Attributes{Name: name(r.obj), Namespace: r.namespace, Resource: r.resource, Subresource: r.subresource,
			Operation: r.op, Object: obj, Record: admission.NewRecord(), UserInfo: authenticationv1.UserInfo{Username: "u"}}
		ctx, cancel := contextFor(r)
		o.setErr(p.ours.Validate(ctx, a))
		cancel()
		for _, an := range a.Record.Annotations(admission.LevelRequestResponse) {
			o.Audit[an.Key] = an.Value
		}
		obj = a.Object // what the later validating plugins see
	}
	if pod, ok := obj.(*corev1.Pod); ok {
		o.Annotations = pod.Annotations
	}
	o.Sent = b.received()
	return o
}

func contextFor(r request) (context.Context, context.CancelFunc) {
	if r.timeout > 0 {
		return context.WithTimeout(context.Background(), r.timeout)
	}
	return context.WithCancel(context.Background())
}

// compare runs r through upstream's plugin then admitd's, each answered by
// s, and reports a difference; it returns upstream's outcome.
func (p pair) compare(t testing.TB, b *backend, s script, r request) outcome {
	t.Helper()
	up := p.runUpstream(t, b, s, r)
	ours := p.runOurs(b, s, r)
	if !reflect.DeepEqual(up, ours) {
		t.Errorf("%s:\n upstream %+v\n admitd   %+v", r, up, ours)
	}
	return up
}

// toInternal converts a versioned object to upstream's internal type, as
// kube-apiserver decodes it.
func toInternal(t testing.TB, obj runtime.Object) runtime.Object {
	gvks, _, err := legacyscheme.Scheme.ObjectKinds(obj)
	if err != nil {
		t.Fatal(err)
	}
	out, err := legacyscheme.Scheme.ConvertToVersion(obj.DeepCopyObject(), schema.GroupVersion{Group: gvks[0].Group, Version: runtime.APIVersionInternal})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeFile(t testing.TB, dir, name, data string) string {
	path := filepath(dir, name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

var podsResource = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

func upNew(config string) (*upimagepolicy.Plugin, error) {
	return upimagepolicy.NewImagePolicyWebhook(strings.NewReader(config))
}

func upNewReader(r io.Reader) (*upimagepolicy.Plugin, error) {
	return upimagepolicy.NewImagePolicyWebhook(r)
}

func imagepolicywebhookLoadNil() (*imagepolicywebhook.Configuration, error) {
	return imagepolicywebhook.LoadConfiguration(nil)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func filepath(dir, name string) string { return dir + "/" + name }
