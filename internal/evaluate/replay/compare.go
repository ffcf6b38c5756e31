package replay

import (
	"encoding/json"
	"maps"
	"regexp"
	"strings"

	"github.com/admitd/admitd/internal/evaluate"
	"github.com/admitd/admitd/pkg/admission/trace"
	"github.com/admitd/admitd/pkg/webhook"
)

// outcome is what a request got: recorded in the log, or replayed.
type outcome struct {
	Decision
	// object is the object stored (nil for a DELETE or a refusal).
	object map[string]any
	// annotations are the admission audit annotations.
	annotations map[string]string
}

// Decision is whether a request was allowed, and its refusal.
type Decision struct {
	Allowed bool   `json:"allowed"`
	Code    int32  `json:"code"`
	Message string `json:"message,omitempty"`
}

func recorded(ev *Event) outcome {
	o := outcome{Decision: Decision{Allowed: ev.succeeded(), Code: ev.code()}, annotations: admissionAnnotations(ev.Annotations)}
	if st := ev.ResponseStatus; st != nil && !o.Allowed {
		o.Message = st.Message
	}
	if u := decode(ev.ResponseObject); u != nil && o.Allowed && ev.Verb != "delete" {
		o.object = u.Object
	}
	return o
}

func replayed(res *evaluate.Result) outcome {
	o := outcome{Decision: Decision{Allowed: res.Allowed, Code: 200}, object: res.Object, annotations: admissionAnnotations(res.AuditAnnotations)}
	if st := res.Status; st != nil {
		o.Code, o.Message = st.Code, st.Message
	}
	return o
}

// admissionAnnotations are the audit annotations admission adds: the
// webhooks' and policies' (keys of *.admission.k8s.io, a policy's
// audit annotations "<policy>/<key>"), pod security's, without
// authorization's and the apiserver's own.
func admissionAnnotations(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if strings.HasPrefix(k, "authorization.k8s.io/") || strings.HasPrefix(k, "apiserver.latency.k8s.io/") ||
			strings.HasPrefix(k, "apiserver.k8s.io/") || strings.HasPrefix(k, "authentication.k8s.io/") {
			continue
		}
		out[k] = v
	}
	return out
}

// unredacted is m with the values that other has redacted (a webhook's
// patch of a Secret, which a trace does not show) redacted too.
func unredacted(m, other map[string]string) map[string]string {
	out := maps.Clone(m)
	for k, v := range other {
		if v == trace.Redacted {
			if _, ok := out[k]; ok {
				out[k] = trace.Redacted
			}
		}
	}
	return out
}

// compare records how after differs from before.
func (r *Report) compare(ref RequestRef, verb string, before, after outcome, res *evaluate.Result, note string) {
	r.Replayed++
	d := Difference{Request: ref, Before: before.Decision, After: after.Decision, Note: note}
	switch {
	case before.Allowed && !after.Allowed:
		d.By = steps(res, trace.OutcomeDenied, trace.OutcomeError)
		r.NowDenied = append(r.NowDenied, d)
	case !before.Allowed && after.Allowed:
		d.By = steps(res, trace.OutcomeMutated)
		r.NowAllowed = append(r.NowAllowed, d)
	case before.Allowed && verb != "delete" && before.object != nil && after.object != nil:
		patch := objectPatch(before.object, after.object)
		if trace.Sensitive(ref.APIGroup, ref.Resource, ref.Subresource) {
			patch = redactedValues(patch)
		}
		if patch == nil {
			r.annotationsOrSame(d, before, after)
			return
		}
		d.Patch, d.By = patch, steps(res, trace.OutcomeMutated)
		r.Changed = append(r.Changed, d)
	default:
		r.annotationsOrSame(d, before, after)
	}
}

func (r *Report) annotationsOrSame(d Difference, before, after outcome) {
	if maps.Equal(unredacted(before.annotations, after.annotations), unredacted(after.annotations, before.annotations)) {
		r.Same++
		return
	}
	d.AnnotationsBefore, d.AnnotationsAfter = before.annotations, after.annotations
	r.Annotations = append(r.Annotations, d)
}

// steps are the titles of the trace's webhooks, policies and plugins with
// one of the outcomes.
func steps(res *evaluate.Result, outcomes ...string) []string {
	if res == nil || res.Trace == nil {
		return nil
	}
	var out []string
	for _, s := range res.Trace.Steps {
		for _, o := range outcomes {
			if s.Outcome == o {
				out = append(out, StepTitle(s.Plugin, s.Name, s.Configuration))
				break
			}
		}
	}
	return out
}

// StepTitle is "ValidatingAdmissionPolicy p (binding b)" and the like.
func StepTitle(plugin, name, configuration string) string {
	switch {
	case name == "":
		return plugin
	case strings.HasSuffix(plugin, "Policy"):
		return plugin + " " + name + " (binding " + configuration + ")"
	}
	return plugin + " " + name + " (configuration " + configuration + ")"
}

// ignoredMetadata are what every write sets anew.
var ignoredMetadata = []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "selfLink"}

// randomSuffix are the names admission makes up: the service account
// plugin's projected token volume.
var randomSuffix = regexp.MustCompile(`kube-api-access-[a-z0-9]{5}`)

// objectPatch is the JSON patch from before to after, without what the
// server sets anew on every write and allocates at random (a Service's
// cluster IPs and node ports); nil when they are the same.
func objectPatch(before, after map[string]any) json.RawMessage {
	a, _ := json.Marshal(comparable(before))
	b, _ := json.Marshal(comparable(after))
	if string(a) == string(b) {
		return nil
	}
	p, err := webhook.CreatePatch(a, b)
	if err != nil || string(p) == "[]" {
		return nil
	}
	return p
}

// redactedValues is patch with every value replaced by trace.Redacted:
// the report of a Secret's change says where it changed, never what it
// holds (reports go to CI artefacts, read by more people than the log).
func redactedValues(patch json.RawMessage) json.RawMessage {
	if patch == nil {
		return nil
	}
	var ops []map[string]any
	if err := json.Unmarshal(patch, &ops); err != nil {
		out, _ := json.Marshal(trace.Redacted)
		return out
	}
	for _, op := range ops {
		if _, ok := op["value"]; ok {
			op["value"] = trace.Redacted
		}
	}
	out, _ := json.Marshal(ops)
	return out
}

func comparable(obj map[string]any) map[string]any {
	raw, _ := json.Marshal(obj)
	raw = randomSuffix.ReplaceAll(raw, []byte("kube-api-access-XXXXX"))
	var c map[string]any
	_ = json.Unmarshal(raw, &c)
	if md, ok := c["metadata"].(map[string]any); ok {
		for _, k := range ignoredMetadata {
			delete(md, k)
		}
	}
	if c["kind"] == "Service" && c["apiVersion"] == "v1" {
		if spec, ok := c["spec"].(map[string]any); ok {
			delete(spec, "clusterIP")
			delete(spec, "clusterIPs")
			if ports, ok := spec["ports"].([]any); ok {
				for _, p := range ports {
					if pm, ok := p.(map[string]any); ok {
						delete(pm, "nodePort")
					}
				}
			}
		}
	}
	return c
}
