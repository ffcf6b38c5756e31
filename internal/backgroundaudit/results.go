package backgroundaudit

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/policies"
)

// Results are what the last complete scan found, as the dashboard reads
// them.
type Results struct {
	// Started and Finished bound the scan; both zero before the first.
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Objects is how many stored objects were evaluated.
	Objects int `json:"objects"`
	// Bindings are the Audit bindings, by policy then binding name, each
	// with the objects it found in violation.
	Bindings []*BindingResult `json:"bindings"`
}

// BindingResult is what one policy found through one Audit binding.
type BindingResult struct {
	Policy  string `json:"policy"`
	Binding string `json:"binding"`
	// Evaluated is how many objects the binding matched and was evaluated
	// on (per param when it has several).
	Evaluated int `json:"evaluated"`
	// Violations are the objects a validation failed on; Errors those the
	// policy or binding could not be evaluated on (failurePolicy Fail).
	// Each list holds at most MaxFindings; Truncated counts the rest.
	Violations []Finding `json:"violations"`
	Errors     []Finding `json:"errors,omitempty"`
	Truncated  int       `json:"truncated,omitempty"`
	// passed are the objects evaluated without a finding (for the
	// PolicyReports' pass results; not served).
	passed int
}

// Finding is one object and what was said of it.
type Finding struct {
	Object   ObjectRef `json:"object"`
	Messages []string  `json:"messages"`
}

// ObjectRef names a stored object.
type ObjectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	UID        string `json:"uid,omitempty"`
}

// MaxFindings bounds the findings kept per binding, so that the results
// of a scan stay small whatever the store holds.
const MaxFindings = 1000

// validationFailureKey is upstream's audit annotation of the failures of
// validations bound with Audit (a JSON list).
const validationFailureKey = "validation.policy.admission.k8s.io/validation_failure"

// validationFailure is one entry of that annotation.
type validationFailure struct {
	Message string `json:"message"`
	Policy  string `json:"policy"`
	Binding string `json:"binding"`
}

type bindingKey struct{ policy, binding string }

// collector gathers a scan's results.
type collector struct {
	res   *Results
	byKey map[bindingKey]*BindingResult
}

func newCollector(bs []auditBinding, started time.Time) *collector {
	c := &collector{res: &Results{Started: started, Bindings: []*BindingResult{}}, byKey: map[bindingKey]*BindingResult{}}
	for _, b := range bs {
		k := bindingKey{b.policy.Name, b.binding.Name}
		if _, ok := c.byKey[k]; !ok {
			br := &BindingResult{Policy: k.policy, Binding: k.binding, Violations: []Finding{}}
			c.byKey[k] = br
			c.res.Bindings = append(c.res.Bindings, br)
		}
	}
	return c
}

// add records the steps the plugin left evaluating obj.
func (c *collector) add(obj ObjectRef, steps []admission.Step) {
	c.res.Objects++
	for _, s := range steps {
		if s.Plugin != policies.ValidatingName || !s.Matched || s.Round != 0 {
			continue
		}
		br, ok := c.byKey[bindingKey{s.Name, s.Config}]
		if !ok {
			continue // a policy's configuration error, without binding
		}
		br.Evaluated++
		switch msgs := failures(s); {
		case len(msgs) > 0:
			br.Violations = br.keep(br.Violations, Finding{Object: obj, Messages: msgs})
		case s.Err != "" && (s.Detail == nil || !s.Detail.FailedOpen):
			br.Errors = br.keep(br.Errors, Finding{Object: obj, Messages: []string{s.Err}})
		default:
			br.passed++
		}
	}
}

func (br *BindingResult) keep(list []Finding, f Finding) []Finding {
	if len(list) >= MaxFindings {
		br.Truncated++
		return list
	}
	return append(list, f)
}

// failures are the messages of the validations a step's binding failed.
func failures(s admission.Step) []string {
	if s.Detail == nil || s.Detail.AuditAnnotations[validationFailureKey] == "" {
		return nil
	}
	var list []validationFailure
	if err := json.Unmarshal([]byte(s.Detail.AuditAnnotations[validationFailureKey]), &list); err != nil {
		return []string{s.Detail.AuditAnnotations[validationFailureKey]}
	}
	out := make([]string, len(list))
	for i, f := range list {
		out[i] = f.Message
	}
	return out
}

// finish sorts the results and stamps the end of the scan.
func (c *collector) finish(now time.Time) *Results {
	c.res.Finished = now
	sort.Slice(c.res.Bindings, func(i, j int) bool {
		a, b := c.res.Bindings[i], c.res.Bindings[j]
		if a.Policy != b.Policy {
			return a.Policy < b.Policy
		}
		return a.Binding < b.Binding
	})
	return c.res
}
