package admissiontest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/pkg/admission"
)

// Case is one request and what admission should decide about it.
type Case struct {
	Name string
	// Attributes is the request; Run gives it a new Record.
	Attributes *admission.Attributes
	// WantErr is the error's text; empty means the request is admitted.
	WantErr string
	// WantCode is the HTTP code of the error's API status; 0 checks none.
	WantCode int32
	// WantObject, when not nil, is the object after the mutating phase
	// (compared with equality.Semantic).
	WantObject runtime.Object
	// WantWarnings are the client warnings recorded, in order.
	WantWarnings []string
	// WantAnnotations are the audit annotations recorded, at any level.
	WantAnnotations map[string]string
	// Check, when set, checks anything else after the expectations above.
	Check func(t *testing.T, a *admission.Attributes, err error)
}

// Run sends every case, as a subtest, through a chain of plugin alone:
// Admit (with reinvocation), then Validate when Admit admitted. plugin may
// itself be a *admission.Chain.
func Run(t *testing.T, plugin admission.Handler, cases []Case) {
	t.Helper()
	chain := admission.NewChain(admission.NamedPlugin{Name: "plugin-under-test", Plugin: plugin})
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			a := *tc.Attributes
			a.Record = admission.NewRecord()
			err := chain.Admit(context.Background(), &a)
			if err == nil {
				err = chain.Validate(context.Background(), &a)
			}
			tc.check(t, &a, err)
		})
	}
}

func (tc Case) check(t *testing.T, a *admission.Attributes, err error) {
	t.Helper()
	for _, m := range tc.mismatches(a, err) {
		t.Error(m)
	}
	if tc.Check != nil {
		tc.Check(t, a, err)
	}
}

// mismatches lists how the outcome differs from the case's expectations.
func (tc Case) mismatches(a *admission.Attributes, err error) []string {
	var out []string
	switch {
	case err == nil && tc.WantErr != "":
		out = append(out, fmt.Sprintf("admitted, want error %q", tc.WantErr))
	case err != nil && err.Error() != tc.WantErr:
		out = append(out, fmt.Sprintf("error = %q, want %s", err, orAdmitted(tc.WantErr)))
	case err != nil && tc.WantCode != 0 && statusCode(err) != tc.WantCode:
		out = append(out, fmt.Sprintf("error code = %d, want %d", statusCode(err), tc.WantCode))
	}
	if tc.WantObject != nil && !equality.Semantic.DeepEqual(a.Object, tc.WantObject) {
		out = append(out, fmt.Sprintf("object = %#v, want %#v", a.Object, tc.WantObject))
	}
	if got := a.Record.Warnings(); !slices.Equal(got, tc.WantWarnings) {
		out = append(out, fmt.Sprintf("warnings = %q, want %q", got, tc.WantWarnings))
	}
	if got := annotations(a.Record); len(got)+len(tc.WantAnnotations) > 0 && !maps.Equal(got, tc.WantAnnotations) {
		out = append(out, fmt.Sprintf("annotations = %v, want %v", got, tc.WantAnnotations))
	}
	return out
}

func orAdmitted(want string) string {
	if want == "" {
		return "admitted"
	}
	return fmt.Sprintf("%q", want)
}

func statusCode(err error) int32 {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Code
	}
	return 0
}

func annotations(r *admission.Record) map[string]string {
	out := map[string]string{}
	for _, a := range r.Annotations(admission.LevelRequestResponse) {
		out[a.Key] = a.Value
	}
	return out
}
