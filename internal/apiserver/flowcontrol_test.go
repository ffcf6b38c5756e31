package apiserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/flowcontrol"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// tinyFlowControl has a level "tiny" of one seat that refuses what it
// cannot seat, for the user mallory.
func tinyFlowControl() *flowcontrol.Controller {
	c := flowcontrol.New(flowcontrol.Options{ServerConcurrencyLimit: 1})
	pl := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "tiny", UID: "pl-uid"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](1),
				LendablePercent: ptr.To[int32](0), BorrowingLimitPercent: ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}}}
	fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "mallory", UID: "fs-uid"},
		Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "tiny"},
			MatchingPrecedence: 10, Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "mallory"}}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
					ClusterScope: true, Namespaces: []string{"*"}}}}}}}
	c.Configure([]*flowcontrolv1.PriorityLevelConfiguration{pl}, []*flowcontrolv1.FlowSchema{fs})
	return c
}

// TestFlowControlRefusesPastTheSeats: while mallory's one seat is held by a
// request, her next is upstream's plain-text 429 with Retry-After and the
// PF headers; system:masters is exempt; once the first request ends, she
// is served again.
func TestFlowControlRefusesPastTheSeats(t *testing.T) {
	cfg := testConfig(memory.New(), registry.NewCatalogue())
	cfg.FlowControl = tinyFlowControl()
	entered, unblock := make(chan struct{}, 1), make(chan struct{})
	cfg.Extra = map[string]http.Handler{"/block": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-unblock
	}), "/fast": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })}
	users := map[string]authenticationv1.UserInfo{
		"mallory": {Username: "mallory", Groups: []string{"system:authenticated"}},
		"admin":   {Username: "admin", Groups: []string{"system:masters", "system:authenticated"}},
	}
	cfg.Authenticate = func(r *http.Request) (authenticationv1.UserInfo, *authenticationv1.UserInfo, error) {
		return users[r.Header.Get("X-User")], nil, nil
	}
	s := New(cfg)
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	get := func(user, path string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.Header.Set("X-User", user)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); get("mallory", "/block") }()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking request never ran")
	}
	w := get("mallory", "/fast")
	if w.Code != http.StatusTooManyRequests || w.Body.String() != "Too many requests, please try again later.\n" || w.Header().Get("Retry-After") != "1" {
		t.Errorf("second request: %d %q Retry-After %q", w.Code, w.Body.String(), w.Header().Get("Retry-After"))
	}
	if w.Header().Get("X-Kubernetes-PF-FlowSchema-UID") != "fs-uid" || w.Header().Get("X-Kubernetes-PF-PriorityLevel-UID") != "pl-uid" {
		t.Errorf("refusal headers: %v", w.Header())
	}
	if w := get("admin", "/fast"); w.Code != http.StatusOK || w.Header().Get("X-Kubernetes-PF-PriorityLevel-UID") == "pl-uid" {
		t.Errorf("admin while mallory is full: %d %v", w.Code, w.Header())
	}
	close(unblock)
	wg.Wait()
	if w := get("mallory", "/fast"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "ok") {
		t.Errorf("after the seat is free: %d %q", w.Code, w.Body.String())
	}
}

// TestInflightLimitWithoutAPF: with APF off, the read-only limit refuses a
// second GET while one runs, and system:masters is not limited.
func TestInflightLimitWithoutAPF(t *testing.T) {
	cfg := testConfig(memory.New(), registry.NewCatalogue())
	cfg.MaxRequestsInflight = 1
	entered, unblock := make(chan struct{}, 1), make(chan struct{})
	cfg.Extra = map[string]http.Handler{"/block": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-unblock
	})}
	cfg.Authenticate = func(r *http.Request) (authenticationv1.UserInfo, *authenticationv1.UserInfo, error) {
		if r.Header.Get("X-User") == "admin" {
			return authenticationv1.UserInfo{Username: "admin", Groups: []string{"system:masters"}}, nil, nil
		}
		return authenticationv1.UserInfo{Username: "bob", Groups: []string{"system:authenticated"}}, nil, nil
	}
	s := New(cfg)
	get := func(user string) int {
		r := httptest.NewRequest(http.MethodGet, "/version", nil)
		r.Header.Set("X-User", user)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w.Code
	}
	go func() {
		r := httptest.NewRequest(http.MethodGet, "/block", nil)
		s.ServeHTTP(httptest.NewRecorder(), r)
	}()
	<-entered
	if code := get("bob"); code != http.StatusTooManyRequests {
		t.Errorf("bob's second GET: %d", code)
	}
	if code := get("admin"); code != http.StatusOK {
		t.Errorf("admin's GET: %d", code)
	}
	close(unblock)
}

// TestWatchGivesItsSeatBackOnceInitialized: a watch holds its seat only
// until it has sent its initial state, as upstream's.
func TestWatchGivesItsSeatBackOnceInitialized(t *testing.T) {
	cfg := testConfig(memory.New(), registry.NewCatalogue())
	cfg.FlowControl = tinyFlowControl()
	cfg.Extra = map[string]http.Handler{"/fast": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
	cfg.Authenticate = func(r *http.Request) (authenticationv1.UserInfo, *authenticationv1.UserInfo, error) {
		return authenticationv1.UserInfo{Username: "mallory", Groups: []string{"system:authenticated"}}, nil, nil
	}
	s := New(cfg)
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/api/v1/namespaces/default/configmaps?watch=true", nil)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch: %d", resp.StatusCode)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, err := ts.Client().Get(ts.URL + "/fast")
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("with a watch open, the one seat stays taken: %d", r.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
