package backgroundaudit

import (
	"encoding/json"
	"time"

	"github.com/admitd/admitd/pkg/admission"
)

// Results are what the last complete scan found, updated by the changes
// to the scanned objects since, as the dashboard reads them.
type Results struct {
	// Started and Finished bound the last complete scan; both zero
	// before the first.
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Updated is when a change to a stored object, followed since that
	// scan, last updated the results (zero when none has).
	Updated time.Time `json:"updated,omitzero"`
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
