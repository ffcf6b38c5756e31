package backgroundaudit

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// maxKeysPolicy allows labelled ConfigMaps at most the param's maxKeys
// keys; it is bound with Audit, with Deny alone and with Warn alone.
const maxKeysPolicy = `
apiVersion: v1
kind: Namespace
metadata: {name: policy}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: limits, namespace: policy}
data: {maxKeys: "2"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-keys}
spec:
  failurePolicy: Fail
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
    objectSelector: {matchLabels: {audited: "yes"}}
  validations:
  - expression: "!has(object.data) || size(object.data) <= int(params.data.maxKeys)"
    messageExpression: "'has ' + string(size(object.data)) + ' keys, more than ' + params.data.maxKeys"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-keys-audit}
spec:
  policyName: max-keys
  validationActions: [Audit, Warn]
  paramRef: {name: limits, namespace: policy, parameterNotFoundAction: Deny}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-keys-deny}
spec:
  policyName: max-keys
  validationActions: [Deny]
  paramRef: {name: limits, namespace: policy, parameterNotFoundAction: Deny}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-keys-warn}
spec:
  policyName: max-keys
  validationActions: [Warn]
  paramRef: {name: limits, namespace: policy, parameterNotFoundAction: Deny}
`

// configMap is a labelled (audited) or unlabelled ConfigMap with keys
// keys.
func configMap(ns, name string, keys int, audited bool) string {
	var data []string
	for i := range keys {
		data = append(data, fmt.Sprintf("k%d: v", i))
	}
	labels := "{}"
	if audited {
		labels = `{audited: "yes"}`
	}
	return fmt.Sprintf("\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s, labels: %s}\ndata: {%s}\n", name, ns, labels, strings.Join(data, ", "))
}

func namespace(name string) string {
	return "\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: " + name + "}\n"
}

func TestScanFindsTheViolatingObjectsOfAuditBindings(t *testing.T) {
	e := newMemoryEnv(t)
	e.apply(maxKeysPolicy + namespace("a") + namespace("b") +
		configMap("a", "small", 1, true) + configMap("a", "big", 3, true) + configMap("a", "big-unlabelled", 3, false) +
		configMap("b", "big2", 5, true) + configMap("b", "empty", 0, true))
	r, err := e.scanner(Options{}).Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := bindingNames(r), []string{"max-keys/max-keys-audit"}; !slices.Equal(got, want) {
		t.Errorf("bindings = %v, want %v (Deny and Warn alone are not audited)", got, want)
	}
	if got, want := violators(r, "max-keys", "max-keys-audit"), []string{"a/big", "b/big2"}; !slices.Equal(got, want) {
		t.Errorf("violations = %v, want %v", got, want)
	}
	br := r.Bindings[0]
	if br.Evaluated != 4 {
		t.Errorf("evaluated = %d, want 4 (the labelled ConfigMaps)", br.Evaluated)
	}
	if len(br.Violations) > 0 {
		if got, want := br.Violations[0].Messages, []string{"has 3 keys, more than 2"}; !slices.Equal(got, want) {
			t.Errorf("messages of a/big = %q, want %q", got, want)
		}
		if o := br.Violations[0].Object; o.APIVersion != "v1" || o.Kind != "ConfigMap" || o.UID != "uid-a-big" {
			t.Errorf("object = %+v, want v1 ConfigMap with uid uid-a-big", o)
		}
	}
	if len(br.Errors) != 0 {
		t.Errorf("errors = %+v, want none", br.Errors)
	}
}

func TestScanWithoutAuditBindingsFindsNothing(t *testing.T) {
	e := newMemoryEnv(t)
	e.apply(strings.ReplaceAll(maxKeysPolicy, "[Audit, Warn]", "[Deny, Warn]") + namespace("a") + configMap("a", "big", 3, true))
	r, err := e.scanner(Options{}).Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Bindings) != 0 || r.Objects != 0 {
		t.Errorf("results = %d bindings, %d objects; want none (no binding has Audit)", len(r.Bindings), r.Objects)
	}
}

// TestRunRescansWhenThePolicyOrItsParamsChange: Run sees a change of the
// param, then of the policy, well before its interval.
func TestRunRescansWhenThePolicyOrItsParamsChange(t *testing.T) {
	e := newMemoryEnv(t)
	e.apply(maxKeysPolicy + namespace("a") + configMap("a", "k3", 3, true) + configMap("a", "k5", 5, true))
	s := e.scanner(Options{CheckEvery: 10 * time.Millisecond, Interval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	waitFor(t, s, []string{"a/k3", "a/k5"})
	e.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: limits, namespace: policy}\ndata: {maxKeys: \"4\"}\n")
	waitFor(t, s, []string{"a/k5"})
	e.apply(strings.ReplaceAll(document(maxKeysPolicy, "kind: ValidatingAdmissionPolicy\n"), "<= int(params.data.maxKeys)", "<= int(params.data.maxKeys) - 2"))
	waitFor(t, s, []string{"a/k3", "a/k5"})
}

// document is the YAML document of docs that contains s.
func document(docs, s string) string {
	for _, d := range strings.Split(docs, "\n---\n") {
		if strings.Contains(d, s) {
			return d
		}
	}
	return ""
}

func waitFor(t *testing.T, s *Scanner, want []string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	var got []string
	for time.Now().Before(deadline) {
		if got = violators(s.Results(), "max-keys", "max-keys-audit"); slices.Equal(got, want) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("violations = %v after 5s, want %v", got, want)
}

// TestScanReadsStoragePageByPage: over 1000 ConfigMaps, no List returns
// more than a page, and every third one is found.
func TestScanReadsStoragePageByPage(t *testing.T) {
	e := newMemoryEnv(t)
	counting := &pageCountingStore{Store: e.store, prefix: "/registry/core/configmaps/"}
	var docs strings.Builder
	docs.WriteString(maxKeysPolicy + namespace("many"))
	var want []string
	for i := range 1000 {
		keys := 1
		if i%3 == 0 {
			keys = 3
			want = append(want, fmt.Sprintf("many/cm-%04d", i))
		}
		docs.WriteString(configMap("many", fmt.Sprintf("cm-%04d", i), keys, true))
	}
	e.apply(docs.String())
	e.store = counting
	r, err := e.scanner(Options{PageSize: 50}).Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := violators(r, "max-keys", "max-keys-audit"); !slices.Equal(got, want) {
		t.Errorf("found %d violations, want %d (first: %v)", len(got), len(want), got[:min(3, len(got))])
	}
	if counting.largest > 50 || counting.unlimited > 0 {
		t.Errorf("largest page listed = %d, unlimited lists = %d; want at most 50 and none", counting.largest, counting.unlimited)
	}
	if r.Objects != 1001 {
		t.Errorf("objects = %d, want 1001 (the ConfigMaps and the param)", r.Objects)
	}
}
