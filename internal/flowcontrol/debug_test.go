package flowcontrol

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func dump(c *Controller, target string) string {
	w := httptest.NewRecorder()
	path, _, _ := strings.Cut(target, "?")
	c.DebugHandlers()[path].ServeHTTP(w, httptest.NewRequest("GET", target, nil))
	return w.Body.String()
}

// TestDumpRequests: upstream's dump_requests lists a level's waiting
// requests with their place in their queue and its executing ones (index
// -1), each with its schema, distinguisher, estimate and times; with
// includeRequestDetails, who sent it and what it asks for.
func TestDumpRequests(t *testing.T) {
	c := bootstrapController(t, time.Now)
	alice := &Digest{User: "alice", Groups: []string{"system:authenticated"}, IsResource: true, Verb: "create",
		APIVersion: "v1", Resource: "configmaps", Namespace: "a", Path: "/api/v1/namespaces/a/configmaps"}
	wide := func(Classification, int) Estimate {
		return Estimate{Seats: 1000, FinalSeats: 2, AdditionalLatency: time.Millisecond}
	}
	held, r := c.Admit(context.Background(), alice, time.Minute, wide)
	if r != nil {
		t.Fatalf("refused: %+v", r)
	}
	bob := &Digest{User: "bob", Groups: []string{"system:authenticated"}, IsResource: true, Verb: "get", APIGroup: "apps",
		APIVersion: "v1", Resource: "deployments", Namespace: "b", Name: "d", Path: "/apis/apps/v1/namespaces/b/deployments/d"}
	seated := make(chan Admission)
	go func() {
		a, _ := c.Admit(context.Background(), bob, time.Minute, func(Classification, int) Estimate { return Estimate{Seats: 1} })
		seated <- a
	}()
	const path = "/debug/api_priority_and_fairness/dump_requests"
	var rows []string
	for i := 0; len(rows) < 3; i++ {
		if i > 500 {
			t.Fatalf("bob never queued:\n%s", dump(c, path))
		}
		time.Sleep(time.Millisecond)
		rows = strings.Split(strings.TrimSpace(dump(c, path)), "\n")
	}
	fields := func(row string) []string {
		f := strings.Split(row, ",")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		return f
	}
	header := fields(rows[0])
	if len(header) != 10 || header[0] != "PriorityLevelName" || header[4] != "FlowDistingsher" || header[9] != "StartTime" {
		t.Errorf("header %q", header)
	}
	byUser := map[string][]string{}
	for _, row := range rows[1:] {
		f := fields(row)
		byUser[f[4]] = f
	}
	// global-default distinguishes flows by user
	if f := byUser["bob"]; f == nil || f[0] != "global-default" || f[1] != "global-default" || f[3] != "0" || f[6] != "1" || f[9] != "0001-01-01T00:00:00Z" {
		t.Errorf("bob's row %q, want waiting first in its queue", f)
	}
	if f := byUser["alice"]; f == nil || f[3] != "-1" || f[6] != "1000" || f[7] != "2" || f[8] != "1ms" || f[9] == "0001-01-01T00:00:00Z" {
		t.Errorf("alice's row %q, want executing with her estimate", f)
	}
	detailed := strings.Split(strings.TrimSpace(dump(c, path+"?includeRequestDetails=1")), "\n")
	if h := fields(detailed[0]); len(h) != 18 || h[10] != "UserName" || h[17] != "SubResource" {
		t.Errorf("detailed header %q", h)
	}
	if !strings.Contains(detailed[len(detailed)-1]+detailed[1], " bob, ") || !strings.Contains(strings.Join(detailed, "\n"), "/apis/apps/v1/namespaces/b/deployments/d") {
		t.Errorf("details missing:\n%s", strings.Join(detailed, "\n"))
	}
	if !strings.Contains(strings.Join(detailed, "\n"), "apps/v1") {
		t.Errorf("API version missing:\n%s", strings.Join(detailed, "\n"))
	}
	held.Release()
	b := <-seated
	b.Release()
	if rows := strings.Split(strings.TrimSpace(dump(c, path)), "\n"); len(rows) != 1 {
		t.Errorf("after both: %q", rows)
	}
}

// TestRemovedLevelQuiesces: a level removed while a request runs and
// another waits in it stays, quiescing, until both are served; then it
// goes. New requests are classified elsewhere meanwhile.
func TestRemovedLevelQuiesces(t *testing.T) {
	c := New(Options{ServerConcurrencyLimit: 600})
	c.Configure(tinyLevel())
	d := &Digest{User: "mallory", Groups: []string{"system:authenticated"}, Verb: "get", Path: "/x"}
	one := func(Classification, int) Estimate { return Estimate{Seats: 1} }
	wide := func(Classification, int) Estimate { return Estimate{Seats: 1000} }
	held, r := c.Admit(context.Background(), d, time.Minute, wide)
	if r != nil || held.PriorityLevel != "tiny" {
		t.Fatalf("first: %+v, %+v", held.Classification, r)
	}
	served := make(chan Admission)
	go func() {
		a, _ := c.Admit(context.Background(), d, time.Minute, one)
		served <- a
	}()
	for i := 0; !strings.Contains(dump(c, "/debug/api_priority_and_fairness/dump_requests"), "tiny, ") ||
		strings.Count(dump(c, "/debug/api_priority_and_fairness/dump_requests"), "tiny, ") < 2; i++ {
		if i > 500 {
			t.Fatal("the second request never queued")
		}
		time.Sleep(time.Millisecond)
	}
	c.Configure(nil, nil)
	row := levelRow(t, dump(c, "/debug/api_priority_and_fairness/dump_priority_levels"), "tiny")
	if row == nil || row[3] != "true" || row[4] != "1" || row[5] != "1" {
		t.Fatalf("removed level's row %q, want quiescing with 1 waiting and 1 executing", row)
	}
	if cl := c.Classify(d); cl.PriorityLevel == "tiny" {
		t.Error("a new request is classified to the removed level")
	}
	held.Release()
	second := <-served
	if second.PriorityLevel != "tiny" || second.Seats != 1 {
		t.Fatalf("waiting request: %+v", second)
	}
	second.Release()
	if row := levelRow(t, dump(c, "/debug/api_priority_and_fairness/dump_priority_levels"), "tiny"); row != nil {
		t.Errorf("idle removed level still listed: %q", row)
	}
}

// tinyLevel is a queuing level "tiny" that neither lends nor borrows, for
// the user mallory.
func tinyLevel() ([]*flowcontrolv1.PriorityLevelConfiguration, []*flowcontrolv1.FlowSchema) {
	pl := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "tiny"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](1),
				LendablePercent: ptr.To[int32](0), BorrowingLimitPercent: ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 4, HandSize: 1, QueueLengthLimit: 10}}}}}
	fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "mallory"},
		Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "tiny"},
			MatchingPrecedence: 10, Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "mallory"}}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}}}}}
	return []*flowcontrolv1.PriorityLevelConfiguration{pl}, []*flowcontrolv1.FlowSchema{fs}
}

func levelRow(t *testing.T, dumped, level string) []string {
	t.Helper()
	for _, row := range strings.Split(dumped, "\n") {
		f := strings.Split(row, ",")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		if f[0] == level {
			return f
		}
	}
	return nil
}
