package authzwebhook

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

const testToken = "authz-webhook-test-token"

// remote is a remote authorizer on 127.0.0.1 that records what it is sent
// and answers with answer (status code, body).
type remote struct {
	mu     sync.Mutex
	bodies []map[string]any
	tokens []string
	answer func(spec map[string]any) (int, any)
	srv    *webhooktest.Server
}

func startRemote(t *testing.T, answer func(spec map[string]any) (int, any)) *remote {
	t.Helper()
	r := &remote{answer: answer}
	r.srv = webhooktest.Start(t, http.HandlerFunc(r.serve))
	return r
}

func (r *remote) serve(w http.ResponseWriter, req *http.Request) {
	data, _ := io.ReadAll(req.Body)
	var body map[string]any
	_ = json.Unmarshal(data, &body)
	r.mu.Lock()
	r.bodies = append(r.bodies, body)
	r.tokens = append(r.tokens, req.Header.Get("Authorization"))
	r.mu.Unlock()
	spec, _ := body["spec"].(map[string]any)
	code, out := r.answer(spec)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(out)
}

func (r *remote) calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bodies)
}

func (r *remote) last() map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bodies[len(r.bodies)-1]
}

// kubeconfig writes a kubeconfig file pointing at the remote with its CA
// and a bearer token.
func (r *remote) kubeconfig(t *testing.T) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["authz"] = &clientcmdapi.Cluster{Server: r.srv.URL + "/authorize", CertificateAuthorityData: r.srv.CABundle()}
	cfg.AuthInfos["apiserver"] = &clientcmdapi.AuthInfo{Token: testToken}
	cfg.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "authz", AuthInfo: "apiserver"}
	cfg.CurrentContext = "ctx"
	path := filepath.Join(t.TempDir(), "webhook.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func status(allowed, denied bool, reason string) (int, any) {
	return http.StatusOK, map[string]any{
		"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
		"status": authorizationv1.SubjectAccessReviewStatus{Allowed: allowed, Denied: denied, Reason: reason},
	}
}

func testOptions() Options {
	o := DefaultOptions()
	o.Version = VersionV1
	o.Backoff = wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 3}
	return o
}

func newTestAuthorizer(t *testing.T, r *remote, o Options) *Authorizer {
	t.Helper()
	w, err := NewFromKubeconfig(r.kubeconfig(t), o)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

var podGet = auth.Attributes{
	User: authenticationv1.UserInfo{Username: "alice", UID: "u-1", Groups: []string{"dev", "system:authenticated"},
		Extra: map[string]authenticationv1.ExtraValue{"scopes": {"a", "b"}}},
	Verb: "get", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Subresource: "log",
	Namespace: "ns1", Name: "p1",
}

func TestDecisions(t *testing.T) {
	tests := []struct {
		name       string
		code       int
		body       any
		want       auth.Decision
		wantReason string
		wantErr    bool
		wantCalls  int
	}{
		{name: "allowed", code: 200, body: mustStatus(true, false, "ok"), want: auth.DecisionAllow, wantReason: "ok", wantCalls: 1},
		{name: "denied", code: 200, body: mustStatus(false, true, "no"), want: auth.DecisionDeny, wantReason: "no", wantCalls: 1},
		{name: "no opinion", code: 200, body: mustStatus(false, false, "dunno"), want: auth.DecisionNoOpinion, wantReason: "dunno", wantCalls: 1},
		{name: "both", code: 200, body: mustStatus(true, true, "both"), want: auth.DecisionDeny, wantReason: "both", wantErr: true, wantCalls: 1},
		{name: "forbidden is not retried", code: 403, body: map[string]any{"kind": "Status", "message": "go away"},
			want: auth.DecisionNoOpinion, wantErr: true, wantCalls: 1},
		{name: "500 is retried", code: 500, body: map[string]any{}, want: auth.DecisionNoOpinion, wantErr: true, wantCalls: 3},
		{name: "undecodable", code: 200, body: "not a review", want: auth.DecisionNoOpinion, wantErr: true, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startRemote(t, func(map[string]any) (int, any) { return tt.code, tt.body })
			w := newTestAuthorizer(t, r, testOptions())
			d, reason, err := w.Authorize(context.Background(), podGet)
			if d != tt.want || reason != tt.wantReason || (err != nil) != tt.wantErr {
				t.Errorf("Authorize = %v, %q, %v; want %v, %q, error %v", d, reason, err, tt.want, tt.wantReason, tt.wantErr)
			}
			if got := r.calls(); got != tt.wantCalls {
				t.Errorf("calls = %d, want %d", got, tt.wantCalls)
			}
			if tok := r.tokens[0]; tok != "Bearer "+testToken {
				t.Errorf("Authorization header = %q, want the kubeconfig's token", tok)
			}
		})
	}
}

func mustStatus(allowed, denied bool, reason string) any {
	_, body := status(allowed, denied, reason)
	return body
}

func TestDecisionOnErrorDeny(t *testing.T) {
	r := startRemote(t, func(map[string]any) (int, any) { return 403, map[string]any{} })
	o := testOptions()
	o.DecisionOnError = auth.DecisionDeny
	w := newTestAuthorizer(t, r, o)
	if d, _, err := w.Authorize(context.Background(), podGet); d != auth.DecisionDeny || err == nil {
		t.Errorf("Authorize = %v, %v; want Deny with an error", d, err)
	}
}

func TestUnreachableIsNoOpinion(t *testing.T) {
	r := startRemote(t, func(map[string]any) (int, any) { return status(true, false, "") })
	w := newTestAuthorizer(t, r, testOptions())
	r.srv.Close()
	d, _, err := w.Authorize(context.Background(), podGet)
	if d != auth.DecisionNoOpinion || err == nil {
		t.Errorf("Authorize = %v, %v; want NoOpinion with an error", d, err)
	}
}

func TestCache(t *testing.T) {
	allow := true
	r := startRemote(t, func(map[string]any) (int, any) { return status(allow, false, "") })
	o := testOptions()
	clk := clocktesting.NewFakePassiveClock(time.Now())
	o.Clock = clk
	w := newTestAuthorizer(t, r, o)
	ask := func(a auth.Attributes, want auth.Decision, wantCalls int) {
		t.Helper()
		if d, _, err := w.Authorize(context.Background(), a); d != want || err != nil {
			t.Fatalf("Authorize = %v, %v; want %v", d, err, want)
		}
		if got := r.calls(); got != wantCalls {
			t.Fatalf("calls = %d, want %d", got, wantCalls)
		}
	}
	ask(podGet, auth.DecisionAllow, 1)
	ask(podGet, auth.DecisionAllow, 1) // cached
	other := podGet
	other.Name = "p2"
	ask(other, auth.DecisionAllow, 2) // a different question
	clk.SetTime(clk.Now().Add(o.AuthorizedTTL - time.Second))
	ask(podGet, auth.DecisionAllow, 2)
	clk.SetTime(clk.Now().Add(2 * time.Second))
	allow = false
	ask(podGet, auth.DecisionNoOpinion, 3) // expired
	ask(podGet, auth.DecisionNoOpinion, 3) // unauthorized answers are cached too
	clk.SetTime(clk.Now().Add(o.UnauthorizedTTL + time.Second))
	ask(podGet, auth.DecisionNoOpinion, 4)
}

func TestErrorsAreNotCached(t *testing.T) {
	fail := true
	r := startRemote(t, func(map[string]any) (int, any) {
		if fail {
			return 403, map[string]any{}
		}
		return status(true, false, "")
	})
	w := newTestAuthorizer(t, r, testOptions())
	if _, _, err := w.Authorize(context.Background(), podGet); err == nil {
		t.Fatal("Authorize: no error, want one")
	}
	fail = false
	if d, _, err := w.Authorize(context.Background(), podGet); d != auth.DecisionAllow || err != nil {
		t.Errorf("Authorize after a failure = %v, %v; want Allow", d, err)
	}
}

func TestReviewSent(t *testing.T) {
	sel := podGet
	sel.Verb, sel.Subresource, sel.Name = "list", "", ""
	fs, _ := fields.ParseSelector("spec.nodeName=n1,metadata.name!=x")
	ls, _ := labels.Parse("app in (a,b),!gone")
	sel.FieldSelector = fs.Requirements()
	sel.LabelSelector, _ = ls.Requirements()
	nonResource := auth.Attributes{User: authenticationv1.UserInfo{Username: "bob"}, Verb: "get", Path: "/healthz"}
	tests := []struct {
		name    string
		version string
		attrs   auth.Attributes
		want    string
	}{
		{"v1 resource", VersionV1, podGet, `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview",
			"spec":{"user":"alice","uid":"u-1","groups":["dev","system:authenticated"],"extra":{"scopes":["a","b"]},
			"resourceAttributes":{"namespace":"ns1","verb":"get","version":"v1","resource":"pods","subresource":"log","name":"p1"}},
			"status":{"allowed":false}}`},
		{"v1beta1 resource", VersionV1beta1, podGet, `{"apiVersion":"authorization.k8s.io/v1beta1","kind":"SubjectAccessReview",
			"spec":{"user":"alice","uid":"u-1","group":["dev","system:authenticated"],"extra":{"scopes":["a","b"]},
			"resourceAttributes":{"namespace":"ns1","verb":"get","version":"v1","resource":"pods","subresource":"log","name":"p1"}},
			"status":{"allowed":false}}`},
		{"selectors", VersionV1, sel, `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview",
			"spec":{"user":"alice","uid":"u-1","groups":["dev","system:authenticated"],"extra":{"scopes":["a","b"]},
			"resourceAttributes":{"namespace":"ns1","verb":"list","version":"v1","resource":"pods",
			"fieldSelector":{"requirements":[{"key":"metadata.name","operator":"NotIn","values":["x"]},{"key":"spec.nodeName","operator":"In","values":["n1"]}]},
			"labelSelector":{"requirements":[{"key":"app","operator":"In","values":["a","b"]},{"key":"gone","operator":"DoesNotExist"}]}}},
			"status":{"allowed":false}}`},
		{"non-resource", VersionV1, nonResource, `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview",
			"spec":{"user":"bob","nonResourceAttributes":{"path":"/healthz","verb":"get"}},"status":{"allowed":false}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startRemote(t, func(map[string]any) (int, any) { return status(true, false, "") })
			o := testOptions()
			o.Version = tt.version
			w := newTestAuthorizer(t, r, o)
			if _, _, err := w.Authorize(context.Background(), tt.attrs); err != nil {
				t.Fatal(err)
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if got := r.last(); !reflect.DeepEqual(got, want) {
				gotJSON, _ := json.Marshal(got)
				t.Errorf("sent %s\nwant %s", gotJSON, tt.want)
			}
		})
	}
}

func TestBadOptions(t *testing.T) {
	r := startRemote(t, func(map[string]any) (int, any) { return status(true, false, "") })
	o := testOptions()
	o.Version = "v2"
	if _, err := NewFromKubeconfig(r.kubeconfig(t), o); err == nil {
		t.Error("NewFromKubeconfig(version v2): no error, want one")
	}
	if _, err := NewFromKubeconfig(filepath.Join(t.TempDir(), "missing"), testOptions()); err == nil {
		t.Error("NewFromKubeconfig(missing file): no error, want one")
	}
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(bad, []byte("{not yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewFromKubeconfig(bad, testOptions()); err == nil {
		t.Error("NewFromKubeconfig(bad file): no error, want one")
	}
}

func TestRulesReviewIncomplete(t *testing.T) {
	r := startRemote(t, func(map[string]any) (int, any) { return status(true, false, "") })
	w := newTestAuthorizer(t, r, testOptions())
	if _, _, incomplete, err := w.RulesReview(podGet.User, "ns1"); !incomplete || err == nil {
		t.Errorf("RulesReview = incomplete %v, %v; want incomplete with an error", incomplete, err)
	}
}
