package replay

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/internal/evaluate"
)

func TestMain(m *testing.M) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	os.Exit(m.Run())
}

func objects(t *testing.T, docs string) []evaluate.Object {
	t.Helper()
	var out []evaluate.Object
	for i, doc := range strings.Split(docs, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, evaluate.Object{Unstructured: &unstructured.Unstructured{Object: m}, Source: fmt.Sprint("doc", i+1)})
	}
	return out
}

const requireTeam = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: require-team}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  validations:
  - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
    message: every ConfigMap needs a team label
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: require-team}
spec:
  policyName: require-team
  validationActions: [Deny]
`

const addOwner = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: owner}
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: "Object{metadata: Object.metadata{labels: {'owner': 'platform'}}}"
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: owner}
spec:
  policyName: owner
`

// event is one audit log line on a ConfigMap of namespace shop.
func event(id, verb, name, query string, code int, request, response string) string {
	uri := "/api/v1/namespaces/shop/configmaps"
	if verb != "create" {
		uri += "/" + name
	}
	if query != "" {
		uri += "?" + query
	}
	ev := map[string]any{"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "RequestResponse", "auditID": id,
		"stage": "ResponseComplete", "requestURI": uri, "verb": verb,
		"user":                     map[string]any{"username": "alice", "groups": []string{"system:authenticated"}},
		"objectRef":                map[string]any{"resource": "configmaps", "namespace": "shop", "name": name, "apiVersion": "v1"},
		"responseStatus":           map[string]any{"metadata": map[string]any{}, "code": code},
		"requestReceivedTimestamp": "2026-11-29T10:00:00.000000Z", "stageTimestamp": "2026-11-29T10:00:00.001000Z"}
	if verb == "create" {
		ev["objectRef"].(map[string]any)["name"] = nil
	}
	if request != "" {
		ev["requestObject"] = json.RawMessage(request)
	}
	if response != "" {
		ev["responseObject"] = json.RawMessage(response)
	}
	if code >= 400 {
		ev["responseStatus"].(map[string]any)["message"] = "refused then"
	}
	b, _ := json.Marshal(ev)
	return string(b)
}

func withSubresource(line, sub string) string {
	var ev map[string]any
	_ = json.Unmarshal([]byte(line), &ev)
	ev["objectRef"].(map[string]any)["subresource"] = sub
	b, _ := json.Marshal(ev)
	return string(b)
}

func cm(name, labels, data string) string {
	return `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"` + name + `","namespace":"shop"` + labels + `},"data":` + data + `}`
}

func stored(name, labels, data string) string {
	return `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"` + name + `","namespace":"shop","uid":"u-` + name +
		`","resourceVersion":"7","creationTimestamp":"2026-11-29T10:00:00Z"` + labels + `},"data":` + data + `}`
}

const team = `,"labels":{"team":"x"}`

// testLog is six requests on ConfigMaps of shop, and lines that are not
// replayed.
func testLog() string {
	return strings.Join([]string{
		`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"r0","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/shop/configmaps","verb":"list","user":{"username":"alice"},"objectRef":{"resource":"configmaps","namespace":"shop","apiVersion":"v1"},"requestReceivedTimestamp":"2026-11-29T10:00:00.000000Z","stageTimestamp":"2026-11-29T10:00:00.000000Z"}`,
		event("c1", "create", "a", "", 201, cm("a", team, `{"k":"v"}`), stored("a", team, `{"k":"v"}`)),
		event("c2", "create", "b", "", 201, cm("b", "", `{"k":"v"}`), stored("b", "", `{"k":"v"}`)),
		event("u3", "update", "b", "", 200, cm("b", "", `{"k":"w"}`), stored("b", "", `{"k":"w"}`)),
		event("p4", "patch", "a", "fieldManager=kubectl-label", 200, `{"metadata":{"labels":{"team":null}}}`, stored("a", "", `{"k":"v"}`)),
		event("d5", "delete", "b", "", 200, "", `{"kind":"Status","apiVersion":"v1","status":"Success"}`),
		event("c6", "create", "c", "", 422, cm("c", "", `{}`), ""),
		withSubresource(event("s7", "update", "a", "", 200, cm("a", "", `{}`), ""), "status"),
	}, "\n") + "\n"
}

// scanLog is the log of a file with text.
func scanLog(t *testing.T, text string) *Log {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := ScanLog(path)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// eventsOf are the events a replay of l reads.
func eventsOf(t *testing.T, l *Log) []*Event {
	t.Helper()
	var out []*Event
	if err := l.each(func(ev *Event) error { out = append(out, ev); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func ids(ds []Difference) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Request.AuditID)
	}
	return out
}

func run(t *testing.T, o Options) *Report {
	t.Helper()
	r, err := Run(context.Background(), scanLog(t, testLog()), o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestLogKeepsTheCompletedWrites(t *testing.T) {
	l := scanLog(t, testLog())
	evs := eventsOf(t, l)
	var got []string
	for _, ev := range evs {
		got = append(got, ev.AuditID)
	}
	if want := []string{"c1", "c2", "u3", "p4", "d5", "c6", "s7"}; !slices.Equal(got, want) {
		t.Errorf("events %v, want %v (the list left out)", got, want)
	}
	if evs[0].Line != 2 || l.Requests != 7 {
		t.Errorf("c1 is on line %d, the log has %d requests; want 2, 7", evs[0].Line, l.Requests)
	}
	path := filepath.Join(t.TempDir(), "bad.log")
	_ = os.WriteFile(path, []byte(testLog()+"{\"kind\":\"Pod\",\"apiVersion\":\"v1\"}\n"), 0o600)
	if _, err := ScanLog(path); err == nil || !strings.Contains(err.Error(), "bad.log:9: not an audit.k8s.io/v1 Event") {
		t.Errorf("a Pod line: %v, want bad.log:9: not an audit.k8s.io/v1 Event", err)
	}
}

// TestReplayWithoutConfigurationReproducesTheAllowedRequests: no
// configuration allows all, with the objects recorded; the refused create
// is now allowed.
func TestReplayWithoutConfigurationReproducesTheAllowedRequests(t *testing.T) {
	r := run(t, Options{})
	if r.Replayed != 6 || r.Same != 5 || r.Skipped["requests on subresources (status)"] != 1 {
		t.Errorf("replayed %d, same %d, skipped %v; want 6, 5, 1 status update", r.Replayed, r.Same, r.Skipped)
	}
	if got := ids(r.NowAllowed); !slices.Equal(got, []string{"c6"}) {
		t.Errorf("now allowed %v, want [c6]", got)
	}
	if r.Differences() != 1 || len(r.NotReplayed) != 0 {
		t.Errorf("differences %d, not replayed %+v; want only c6", r.Differences(), r.NotReplayed)
	}
}

func TestReplayNamesTheRequestsACandidateDenies(t *testing.T) {
	r := run(t, Options{Candidate: objects(t, requireTeam)})
	if got := ids(r.NowDenied); !slices.Equal(got, []string{"c2", "u3", "p4"}) {
		t.Errorf("now denied %v, want [c2 u3 p4]", got)
	}
	d := r.NowDenied[0]
	if !strings.Contains(d.After.Message, "every ConfigMap needs a team label") || d.After.Code != 422 ||
		!slices.Equal(d.By, []string{"ValidatingAdmissionPolicy require-team (binding require-team)"}) {
		t.Errorf("c2: %+v", d)
	}
	if r.Same != 3 || len(r.NowAllowed) != 0 || !r.Fails(FailOnDeny) {
		t.Errorf("same %d, now allowed %v; want 3 (c1, d5, c6), none", r.Same, ids(r.NowAllowed))
	}
}

func TestReplayGivesThePatchOfAMutation(t *testing.T) {
	r := run(t, Options{Candidate: objects(t, addOwner)})
	if got := ids(r.Changed); !slices.Equal(got, []string{"c1", "c2", "u3", "p4"}) {
		t.Fatalf("changed %v, want [c1 c2 u3 p4]", got)
	}
	if p := string(r.Changed[1].Patch); p != `[{"op":"add","path":"/metadata/labels","value":{"owner":"platform"}}]` {
		t.Errorf("c2's patch %s", p)
	}
	if r.Fails(FailOnDeny) || !r.Fails(FailOnChange) || r.Fails(FailOnNone) {
		t.Errorf("fails deny %v, change %v, none %v; want false, true, false", r.Fails(FailOnDeny), r.Fails(FailOnChange), r.Fails(FailOnNone))
	}
}

func TestReplayAgainstABaseline(t *testing.T) {
	r := run(t, Options{Baseline: objects(t, requireTeam), Candidate: nil})
	if got := ids(r.NowAllowed); !slices.Equal(got, []string{"c2", "u3", "p4", "c6"}) {
		t.Errorf("now allowed against the baseline %v, want [c2 u3 p4 c6]", got)
	}
	if r.ComparedWith != "baseline" || len(r.NowDenied) != 0 {
		t.Errorf("compared with %s, now denied %v", r.ComparedWith, ids(r.NowDenied))
	}
}

// generatedNamespaceLog creates a Namespace with generateName (the
// cluster named it gen-x7k2p) and a ConfigMap in it.
func generatedNamespaceLog() string {
	ns := map[string]any{"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "RequestResponse", "auditID": "n1",
		"stage": "ResponseComplete", "requestURI": "/api/v1/namespaces", "verb": "create",
		"user":                     map[string]any{"username": "alice"},
		"objectRef":                map[string]any{"resource": "namespaces", "apiVersion": "v1"},
		"responseStatus":           map[string]any{"metadata": map[string]any{}, "code": 201},
		"requestObject":            json.RawMessage(`{"kind":"Namespace","apiVersion":"v1","metadata":{"generateName":"gen-","labels":{"team":"x"}}}`),
		"responseObject":           json.RawMessage(`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"gen-x7k2p","generateName":"gen-","uid":"u-ns","resourceVersion":"3","labels":{"team":"x","kubernetes.io/metadata.name":"gen-x7k2p"}},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}`),
		"requestReceivedTimestamp": "2026-11-29T10:00:00.000000Z", "stageTimestamp": "2026-11-29T10:00:00.001000Z"}
	b, _ := json.Marshal(ns)
	inNS := strings.ReplaceAll(event("c1", "create", "a", "", 201, cm("a", team, `{"k":"v"}`), stored("a", team, `{"k":"v"}`)), "shop", "gen-x7k2p")
	return string(b) + "\n" + inNS + "\n"
}

// TestReplaySeedsNoNamespaceTheLogCreatesWithGenerateName: the Namespace
// is created by its replayed request under the name the cluster gave it,
// not seeded before as one the log only uses.
func TestReplaySeedsNoNamespaceTheLogCreatesWithGenerateName(t *testing.T) {
	l := scanLog(t, generatedNamespaceLog())
	for _, o := range seedOf(l, nil) {
		if o.GetName() == "gen-x7k2p" {
			t.Errorf("seeded %s %s, want it created by the log's request", o.GetKind(), o.GetName())
		}
	}
	r, err := Run(context.Background(), l, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Replayed != 2 || r.Same != 2 || len(r.Skipped) != 0 || len(r.NotReplayed) != 0 {
		t.Errorf("replayed %d, same %d, skipped %v, not replayed %+v; want the namespace's and the ConfigMap's creates replayed, the same",
			r.Replayed, r.Same, r.Skipped, r.NotReplayed)
	}
}

// TestNothingReplayedSaysWhy: a log at level Metadata has no request
// bodies: nothing is replayed, and the report says why and which audit
// level replays; so does an empty log; a replayed log says nothing.
func TestNothingReplayedSaysWhy(t *testing.T) {
	metadata := event("c1", "create", "a", "", 201, "", "") + "\n" + event("u2", "update", "a", "", 200, "", "") + "\n"
	r, err := Run(context.Background(), scanLog(t, metadata), Options{Candidate: objects(t, requireTeam)})
	if err != nil {
		t.Fatal(err)
	}
	why := r.NothingReplayed()
	for _, want := range []string{"nothing was replayed of the audit log's 2 ", "2 requests without requestObject", "level RequestResponse"} {
		if !strings.Contains(why, want) {
			t.Errorf("NothingReplayed() = %q, want it to say %q", why, want)
		}
	}
	if empty := newReport(0, false).NothingReplayed(); !strings.Contains(empty, "no create, update, patch or delete requests") {
		t.Errorf("of an empty log: %q", empty)
	}
	if got := run(t, Options{}).NothingReplayed(); got != "" {
		t.Errorf("of a replayed log: %q, want none", got)
	}
}

// namespaceCreatedAfterUseLog: a ConfigMap's create in namespace shop is
// logged before shop's own create (labels env: prod), as a controller's
// request started by the namespace's create completes first; the
// ConfigMap has no team label and was refused.
func namespaceCreatedAfterUseLog() string {
	ns := strings.ReplaceAll(generatedNamespaceLog(), "gen-x7k2p", "shop")
	nsLine := strings.SplitN(ns, "\n", 2)[0]
	nsLine = strings.ReplaceAll(nsLine, `"generateName":"gen-",`, "")
	nsLine = strings.ReplaceAll(nsLine, `"team":"x"`, `"env":"prod"`)
	refused := event("c1", "create", "a", "", 403, cm("a", "", `{"k":"v"}`), "")
	return refused + "\n" + nsLine + "\n"
}

// TestReplaySeedsANamespaceUsedBeforeItsCreateAsTheCreateMadeIt: the
// namespace is seeded with its create's labels, so a binding selecting
// them matches the earlier request, as it did in the cluster.
func TestReplaySeedsANamespaceUsedBeforeItsCreateAsTheCreateMadeIt(t *testing.T) {
	l := scanLog(t, namespaceCreatedAfterUseLog())
	var seededLabels map[string]string
	for _, o := range seedOf(l, nil) {
		if o.GetKind() == "Namespace" && o.GetName() == "shop" {
			seededLabels = o.GetLabels()
		}
	}
	if seededLabels["env"] != "prod" {
		t.Fatalf("seeded shop with labels %v, want its create's (env: prod)", seededLabels)
	}
	prodOnly := strings.Replace(requireTeam, "  validationActions: [Deny]\n", "  validationActions: [Deny]\n  matchResources: {namespaceSelector: {matchLabels: {env: prod}}}\n", 1)
	r, err := Run(context.Background(), l, Options{Candidate: objects(t, prodOnly)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Replayed != 1 || r.Same != 1 || len(r.NowAllowed) != 0 {
		t.Errorf("replayed %d, same %d, now allowed %+v; want the ConfigMap's create refused again", r.Replayed, r.Same, r.NowAllowed)
	}
	if len(r.Skipped) != 1 {
		t.Errorf("skipped %v, want the namespace's create, as seeded", r.Skipped)
	}
}
