package apiserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/features"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// metaSeer remembers the metadata of the last object mutating admission saw
// on a subresource create.
type metaSeer struct {
	mu   sync.Mutex
	last metav1.Object
}

func (m *metaSeer) Handles(admission.Operation) bool { return true }

func (m *metaSeer) Admit(_ context.Context, a *admission.Attributes) error {
	if a.Subresource == "" && a.Resource.Resource != "bindings" {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last = accessor(a.Object.DeepCopyObject())
	return nil
}

func (m *metaSeer) take() metav1.Object {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.last
	m.last = nil
	return out
}

// entryOf is a managedFields entry as kube-apiserver 1.37.2 records it
// before admission (time left out).
func entryOf(e metav1.ManagedFieldsEntry) string {
	fields := ""
	if e.FieldsV1 != nil {
		fields = string(e.FieldsV1.Raw)
	}
	return strings.Join([]string{e.Manager, string(e.Operation), e.APIVersion, e.FieldsType, e.Subresource, fields}, " ")
}

// Creates through a subresource of another kind are recorded in the body's
// managedFields before admission, as the real kube-apiserver 1.37.2 records
// them (compared with a policy showing what it saw, and with its token
// answer): typed by the body's kind, the subresource named, the client's
// own entries dropped (and its system fields, but for a token request and a
// pod binding), none for an eviction that sets nothing but metadata.
func TestSubresourceCreatesRecordManagedFields(t *testing.T) {
	seer := &metaSeer{}
	ts := newTestServer(t, admission.NamedPlugin{Name: "seer", Plugin: seer})
	sa := ts.must(201, "POST", saPath, "", `{"metadata":{"name":"builder"}}`)
	for _, name := range []string{"web", "legacy", "evicted"} {
		ts.must(201, "POST", podsPath, "", podJSON(name, ""))
	}
	bogusFields := `"managedFields":[{"manager":"sent","operation":"Bogus","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{}}]`
	bogus := `"uid":"1234","creationTimestamp":"2020-01-01T00:00:00Z",` + bogusFields
	for _, tc := range []struct {
		name, path, body string
		want             []string
	}{
		{"token", saPath + "/builder/token", `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"audiences":["x"]}}`,
			[]string{`unit-test Update authentication.k8s.io/v1 FieldsV1 token {"f:spec":{"f:audiences":{},"f:expirationSeconds":{}}}`}},
		{"pod binding", podsPath + "/web/binding", `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"web",` + bogusFields + `},"target":{"name":"n1"}}`,
			[]string{`unit-test Update v1 FieldsV1 binding {"f:target":{"f:name":{}}}`}},
		{"bindings", "/api/v1/namespaces/default/bindings?fieldManager=scheduler", `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"legacy",` + bogus + `},"target":{"name":"n1"}}`,
			[]string{`scheduler Update v1 FieldsV1  {"f:target":{"f:name":{}}}`}},
		{"eviction", podsPath + "/evicted/eviction", `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"evicted",` + bogus + `}}`, nil},
	} {
		w := ts.do("POST", tc.path, "", tc.body)
		if w.Code != 201 {
			t.Fatalf("%s: POST = %d %s", tc.name, w.Code, w.Body)
		}
		seen := seer.take()
		if seen == nil {
			t.Fatalf("%s: admission saw nothing", tc.name)
		}
		var got []string
		for _, e := range seen.GetManagedFields() {
			got = append(got, entryOf(e))
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s: admission saw managedFields\n%s\nwant\n%s", tc.name, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
		if tc.name == "token" { // the account's uid is filled in after mutating admission
			var tr authenticationv1.TokenRequest
			decodeInto(t, w.Body.Bytes(), &tr)
			if len(tr.ManagedFields) != 1 || entryOf(tr.ManagedFields[0]) != tc.want[0] || tr.UID != sa.UID {
				t.Errorf("token answer metadata = %+v, want the recorded entry and the account's uid", tr.ObjectMeta)
			}
			continue
		}
		if tc.name == "pod binding" {
			continue // it keeps what its client sent (uid and resourceVersion are its preconditions)
		}
		if ct := seen.GetCreationTimestamp(); seen.GetUID() != "" || !ct.IsZero() {
			t.Errorf("%s: admission saw the client's uid %q and creationTimestamp %v, want them cleared", tc.name, seen.GetUID(), ct)
		}
	}
}

// A token request naming another uid than its service account's is a
// conflict (TokenRequestServiceAccountUIDValidation, on by default in 1.37);
// with the gate off it is served with a warning, as kube-apiserver does.
func TestTokenRequestUIDMustBeTheServiceAccounts(t *testing.T) {
	for _, gate := range []bool{true, false} {
		gates := features.New()
		if err := gates.SetFromMap(map[string]bool{"TokenRequestServiceAccountUIDValidation": gate}); err != nil {
			t.Fatal(err)
		}
		cat := registry.NewCatalogue()
		cat.SetFeatureGates(gates)
		cfg := testConfig(memory.New(), cat)
		var mu sync.Mutex
		var audited []admission.Annotation
		cfg.OnRequestDone = func(_ context.Context, ev *RequestEvent) {
			if ev.Subresource == "token" && ev.Record != nil {
				mu.Lock()
				audited = ev.Record.Annotations(admission.LevelMetadata)
				mu.Unlock()
			}
		}
		s := New(cfg)
		if err := s.Bootstrap(context.Background()); err != nil {
			t.Fatal(err)
		}
		ts := &testServer{t: t, s: s}
		sa := ts.must(201, "POST", saPath, "", `{"metadata":{"name":"builder"}}`)
		ts.must(201, "POST", saPath+"/builder/token", "", `{"metadata":{"uid":"`+string(sa.UID)+`"},"spec":{}}`)

		w := ts.do("POST", saPath+"/builder/token", "", `{"metadata":{"uid":"other"},"spec":{}}`)
		mismatch := "the UID in the token request (other) does not match the UID of the service account (" + string(sa.UID) + ")"
		if gate {
			code, msg := statusMessage(t, w.Body.Bytes())
			want := `Operation cannot be fulfilled on TokenRequest.authentication.k8s.io "builder": ` + mismatch
			if w.Code != 409 || code != 409 || msg != want {
				t.Errorf("gate on: POST = %d %q, want 409 %q", w.Code, msg, want)
			}
			continue
		}
		var tr authenticationv1.TokenRequest
		if err := json.Unmarshal(w.Body.Bytes(), &tr); err != nil || w.Code != 201 || tr.UID != "other" {
			t.Errorf("gate off: POST = %d %s, want 201 keeping the uid sent", w.Code, w.Body)
		}
		if warning := w.Header().Get("Warning"); !strings.Contains(warning, mismatch+" but TokenRequestServiceAccountUIDValidation is not enabled") {
			t.Errorf("gate off: Warning = %q", warning)
		}
		mu.Lock()
		found := slices.Contains(audited, admission.Annotation{Key: "authentication.k8s.io/token-request-uid-mismatch", Value: mismatch, Level: admission.LevelMetadata})
		mu.Unlock()
		if !found {
			t.Errorf("gate off: audit annotations %v, want authentication.k8s.io/token-request-uid-mismatch", audited)
		}
	}
}
