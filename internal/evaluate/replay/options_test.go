package replay

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/admitd/admitd/internal/audit"
)

func TestPatchTypeGuess(t *testing.T) {
	core := target{gvk: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}}
	custom := target{gvk: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}}
	for _, tc := range []struct {
		name, query, body string
		t                 target
		want              types.PatchType
	}{
		{"json patch", "fieldManager=kubectl-patch", `[{"op":"remove","path":"/data/k"}]`, core, types.JSONPatchType},
		{"kubectl label", "fieldManager=kubectl-label", `{"metadata":{"labels":{"a":"b"}}}`, core, types.StrategicMergePatchType},
		{"kubectl patch of a custom resource", "fieldManager=kubectl-patch", `{"spec":{"a":1}}`, custom, types.MergePatchType},
		{"server-side apply (force)", "fieldManager=kubectl&force=false", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"e"}}`, core, types.ApplyPatchType},
		{"apply of a controller", "fieldManager=my-controller", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"e"}}`, core, types.ApplyPatchType},
		{"client-side apply", "fieldManager=kubectl-client-side-apply", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"e"}}`, core, types.StrategicMergePatchType},
	} {
		ev := &Event{Event: audit.Event{RequestURI: "/api/v1/namespaces/a/configmaps/e?" + tc.query, RequestObject: json.RawMessage(tc.body)}}
		if got := patchType(ev, tc.t); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestUnauthorizedIsTheAuthorizersRefusal(t *testing.T) {
	for msg, want := range map[string]bool{
		`configmaps "a" is forbidden: User "bob" cannot update resource "configmaps" in API group "" in the namespace "x"`: true,
		`admission webhook "w.example.com" denied the request: User "bob" cannot run as root`:                              false,
		`pods "p" is forbidden: containers cannot run as root`:                                                             false,
	} {
		if got := unauthorized(msg); got != want {
			t.Errorf("unauthorized(%q) = %v, want %v", msg, got, want)
		}
	}
}

func TestObjectPatchLeavesOutWhatTheServerSets(t *testing.T) {
	svc := func(ip, uid string, nodePort float64, label string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": "s", "uid": uid, "resourceVersion": uid, "labels": map[string]any{"a": label}},
			"spec": map[string]any{"clusterIP": ip, "clusterIPs": []any{ip}, "ports": []any{map[string]any{"port": 80.0, "nodePort": nodePort}},
				"volumes": "kube-api-access-" + uid}}
	}
	if p := objectPatch(svc("10.0.0.1", "abcde", 30001, "x"), svc("10.0.0.2", "fghij", 30002, "x")); p != nil {
		t.Errorf("allocated IPs, ports, uids, random names: patch %s, want none", p)
	}
	if p := string(objectPatch(svc("10.0.0.1", "abcde", 30001, "x"), svc("10.0.0.1", "abcde", 30001, "y"))); p != `[{"op":"replace","path":"/metadata/labels/a","value":"y"}]` {
		t.Errorf("a label changed: patch %s", p)
	}
}

// A Secret's change is reported where it happened, never with its values.
func TestChangedSecretIsRedacted(t *testing.T) {
	secret := func(v string) outcome {
		return outcome{Decision: Decision{Allowed: true}, object: map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "s"}, "data": map[string]any{"password": v}}}
	}
	for _, tc := range []struct {
		resource, want string
	}{
		{"secrets", `[{"op":"replace","path":"/data/password","value":"REDACTED"}]`},
		{"configmaps", `[{"op":"replace","path":"/data/password","value":"aHVudGVyMg=="}]`},
	} {
		var r Report
		r.compare(RequestRef{Verb: "update", Resource: tc.resource, Name: "s"}, "update", secret("c2VjcmV0"), secret("aHVudGVyMg=="), nil, "")
		if len(r.Changed) != 1 || string(r.Changed[0].Patch) != tc.want {
			t.Errorf("%s: changed %+v, want one with patch %s", tc.resource, r.Changed, tc.want)
		}
	}
}
