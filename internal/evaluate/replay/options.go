package replay

import (
	"bytes"
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// patchType guesses the recorded patch's type, which an audit event does
// not keep: a JSON array is a JSON patch; an object is a server-side
// apply when the request said force (only apply may) or when it names
// its apiVersion, kind and name and its field manager is not one of
// kubectl's patching commands; otherwise a strategic merge patch for
// built-in kinds and a merge patch for custom resources (which take no
// strategic merge).
func patchType(ev *Event, t target) types.PatchType {
	body := bytes.TrimSpace(ev.RequestObject)
	if len(body) > 0 && body[0] == '[' {
		return types.JSONPatchType
	}
	q := ev.query()
	if _, ok := q["force"]; ok {
		return types.ApplyPatchType
	}
	var m struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(body, &m)
	fm := q.Get("fieldManager")
	if m.APIVersion != "" && m.Kind != "" && m.Metadata.Name != "" && fm != "" && !strings.HasPrefix(fm, "kubectl-") {
		return types.ApplyPatchType
	}
	if builtIn(t.gvk.Group) {
		return types.StrategicMergePatchType
	}
	return types.MergePatchType
}

// builtIn reports whether group may be one of Kubernetes' own (custom
// resources are in groups with a dot, mostly not k8s.io's; one that is
// refuses the strategic merge patch and the replay sends a merge patch).
func builtIn(group string) bool {
	return !strings.Contains(group, ".") || strings.HasSuffix(group, ".k8s.io")
}

// fieldManager are the recorded request's fieldManager and force, as
// options of the replayed patch.
func fieldManager(ev *Event) map[string]any {
	q := ev.query()
	opts := map[string]any{}
	if fm := q.Get("fieldManager"); fm != "" {
		opts["fieldManager"] = fm
	}
	if f := q.Get("force"); f == "true" {
		opts["force"] = true
	}
	return opts
}

// deleteOptions are the recorded DeleteOptions (the requestObject of a
// DELETE with a body) without dryRun and preconditions (the replayed
// object's uid and resourceVersion are the session's).
func deleteOptions(ev *Event) map[string]any {
	var m map[string]any
	if json.Unmarshal(ev.RequestObject, &m) != nil || m["kind"] != "DeleteOptions" {
		return nil
	}
	for _, k := range []string{"apiVersion", "kind", "dryRun", "preconditions"} {
		delete(m, k)
	}
	return m
}
