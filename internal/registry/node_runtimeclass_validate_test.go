package registry

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RuntimeClass writes are checked as kube-apiserver 1.37.2's strategy with
// its enforced beta declarative rules on the handler (compared at length
// by test/upstream/nodevalidation).
func TestRuntimeClassValidation(t *testing.T) {
	rc := func(handler string) *nodev1.RuntimeClass {
		return &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "kata", ResourceVersion: "1"}, Handler: handler}
	}
	full := rc("kata")
	full.Overhead = &nodev1.Overhead{PodFixed: corev1.ResourceList{"pods": resource.MustParse("1.5")}}
	full.Scheduling = &nodev1.Scheduling{NodeSelector: map[string]string{"bad key!": "v"},
		Tolerations: []corev1.Toleration{{Key: "k", Operator: "Lt", Value: "1"}, {Key: "k", Operator: "Lt", Value: "1"}}}
	for _, tc := range []struct {
		name string
		obj  *nodev1.RuntimeClass
		want string
	}{
		{"no handler", rc(""), "handler: Required value"},
		{"long handler, worded by the declarative rule", rc("hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh"),
			`handler: Invalid value: "hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh": must be no more than 63 bytes`},
		{"overhead and scheduling", full, `overhead.limits[pods]: Invalid value: "pods": must be a standard resource for containers
overhead.limits[pods]: Invalid value: "1500m": must be an integer
scheduling.nodeSelector: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')
scheduling.tolerations[0].operator: Unsupported value: "Lt": supported values: "Equal", "Exists", "Lt", "Gt"
scheduling.tolerations[1].operator: Unsupported value: "Lt": supported values: "Equal", "Exists", "Lt", "Gt"
scheduling.tolerations[1]: Duplicate value: {"Key":"k","Operator":"Lt","Value":"1","Effect":"","TolerationSeconds":null}`},
		{"valid", rc("kata"), ""},
	} {
		if got := errorLines(createErrors(t, tc.obj)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	r := resourceFor(t, rc("kata"))
	if !r.Strategy.RequireResourceVersion {
		t.Error("RuntimeClass updates need no resourceVersion, want them to (upstream allows no unconditional update)")
	}
	// A changed handler is only immutable in the declarative rule, so its
	// handwritten format error stays, before it.
	want := `handler: Invalid value: "Bad_Handler": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')
handler: Invalid value: null: field is immutable`
	if got := errorLines(r.ValidateChange(rc("Bad_Handler"), rc("runc"))); got != want {
		t.Errorf("handler changed:\n got %s\nwant %s", got, want)
	}
}
