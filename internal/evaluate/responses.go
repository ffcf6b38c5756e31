package evaluate

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

// Responses are recorded webhook answers, by webhook name or by
// "<configuration>/<webhook>". A webhook with recorded responses is not
// called: its configuration is pointed at a local responder that answers
// its first call with the first response, its second with the second,
// and so on; a single response (not a list) answers every call.
type Responses map[string]*Recorded

// Recorded are one webhook's recorded answers.
type Recorded struct {
	// Calls answer the calls in order.
	Calls []Response
	// Every is true when one response answers every call.
	Every bool
}

// Response is an AdmissionResponse as recorded: Patch is a JSON patch,
// written as a list of operations or as base64 as in an AdmissionReview.
type Response struct {
	Allowed          bool              `json:"allowed"`
	Status           *ResponseStatus   `json:"status,omitempty"`
	Patch            json.RawMessage   `json:"patch,omitempty"`
	PatchType        string            `json:"patchType,omitempty"`
	Warnings         []string          `json:"warnings,omitempty"`
	AuditAnnotations map[string]string `json:"auditAnnotations,omitempty"`
}

// ResponseStatus is the result of a denial, as in an AdmissionResponse.
type ResponseStatus struct {
	Code    int32  `json:"code,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// ResponsesKind is the kind of a recorded-responses file
// (apiVersion eval.admitd.io/v1alpha1).
const ResponsesKind = "WebhookResponses"

// responsesFile is the file's form.
type responsesFile struct {
	APIVersion string                     `json:"apiVersion"`
	Kind       string                     `json:"kind"`
	Webhooks   map[string]json.RawMessage `json:"webhooks"`
}

// LoadResponses reads a recorded-responses file.
func LoadResponses(path string) (Responses, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	r, err := ParseResponses(data)
	if err != nil {
		return nil, &ConfigError{Err: fmt.Errorf("%s: %w", path, err)}
	}
	return r, nil
}

// ParseResponses reads the YAML or JSON form of recorded responses.
func ParseResponses(data []byte) (Responses, error) {
	var f responsesFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, err
	}
	if f.Kind != ResponsesKind || f.APIVersion != ResultAPIVersion {
		return nil, fmt.Errorf("want apiVersion %s, kind %s; got %q, %q", ResultAPIVersion, ResponsesKind, f.APIVersion, f.Kind)
	}
	return parseWebhooks(f.Webhooks)
}

func parseWebhooks(m map[string]json.RawMessage) (Responses, error) {
	out := Responses{}
	for name, raw := range m {
		rec, err := parseRecorded(raw)
		if err != nil {
			return nil, fmt.Errorf("webhook %q: %w", name, err)
		}
		out[name] = rec
	}
	return out, nil
}

func parseRecorded(raw json.RawMessage) (*Recorded, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, err
		}
		if len(list) == 0 {
			return nil, errors.New("an empty list of responses")
		}
		rec := &Recorded{}
		for i, item := range list {
			r, err := parseResponse(item)
			if err != nil {
				return nil, fmt.Errorf("response %d: %w", i+1, err)
			}
			rec.Calls = append(rec.Calls, r)
		}
		return rec, nil
	}
	r, err := parseResponse(raw)
	if err != nil {
		return nil, err
	}
	return &Recorded{Calls: []Response{r}, Every: true}, nil
}

func parseResponse(raw json.RawMessage) (Response, error) {
	var r Response
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, err
	}
	patch, err := normalPatch(r.Patch)
	if err != nil {
		return r, err
	}
	r.Patch = patch
	if len(patch) > 0 && r.PatchType == "" {
		r.PatchType = "JSONPatch"
	}
	return r, nil
}

// normalPatch returns the patch as JSON: a base64 string is decoded.
func normalPatch(p json.RawMessage) (json.RawMessage, error) {
	p = bytes.TrimSpace(p)
	if len(p) == 0 || string(p) == "null" {
		return nil, nil
	}
	if p[0] == '"' {
		var s string
		if err := json.Unmarshal(p, &s); err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("patch: a string must be base64: %w", err)
		}
		p = b
	}
	var ops []map[string]any
	if err := json.Unmarshal(p, &ops); err != nil {
		return nil, fmt.Errorf("patch: not a JSON patch (a list of operations): %w", err)
	}
	return p, nil
}

// response returns the answer to call n (from 0), if recorded.
func (r *Recorded) response(n int) (Response, bool) {
	if r.Every {
		return r.Calls[0], true
	}
	if n < len(r.Calls) {
		return r.Calls[n], true
	}
	return Response{}, false
}
