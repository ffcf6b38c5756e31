package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// backgroundAuditConfig: a ConfigMap may have at most its param's maxKeys
// keys (bound with Audit, and with Deny alone, which the scan ignores); a
// labelled Namespace must have a team label (Audit).
const backgroundAuditConfig = `apiVersion: admissionregistration.k8s.io/v1
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
  validationActions: [Audit]
  paramRef: {name: limits, namespace: bga-params, parameterNotFoundAction: Deny}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-keys-deny}
spec:
  policyName: max-keys
  validationActions: [Deny]
  paramRef: {name: limits, namespace: bga-params, parameterNotFoundAction: Deny}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: team-label}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [namespaces]}
    objectSelector: {matchLabels: {audited: "yes"}}
  validations:
  - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
    message: "no team label"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: team-label}
spec:
  policyName: team-label
  validationActions: [Audit, Warn]
`

// backgroundAuditObjects: three namespaces (one labelled without team),
// the param, and ConfigMaps of 1 to 4 keys, labelled or not.
func backgroundAuditObjects() string {
	var b strings.Builder
	for _, ns := range []string{"bga-params", "bga-a", "bga-b"} {
		labels := "{}"
		if ns == "bga-a" {
			labels = `{audited: "yes"}`
		}
		if ns == "bga-b" {
			labels = `{audited: "yes", team: shop}`
		}
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s, labels: %s}\n---\n", ns, labels)
	}
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: limits, namespace: bga-params}\ndata: {maxKeys: \"2\"}\n---\n")
	for _, cm := range []struct {
		ns, name string
		keys     int
		labelled bool
	}{{"bga-a", "one", 1, true}, {"bga-a", "three", 3, true}, {"bga-a", "four-unlabelled", 4, false}, {"bga-b", "two", 2, true}, {"bga-b", "four", 4, true}} {
		var data []string
		for i := range cm.keys {
			data = append(data, fmt.Sprintf("k%d: v", i))
		}
		labels := "{}"
		if cm.labelled {
			labels = `{audited: "yes"}`
		}
		fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s, labels: %s}\ndata: {%s}\n---\n", cm.name, cm.ns, labels, strings.Join(data, ", "))
	}
	return b.String()
}

type compliance struct {
	Enabled bool `json:"enabled"`
	Results struct {
		Finished time.Time `json:"finished"`
		Bindings []struct {
			Policy     string `json:"policy"`
			Binding    string `json:"binding"`
			Violations []struct {
				Object struct {
					Kind      string `json:"kind"`
					Namespace string `json:"namespace"`
					Name      string `json:"name"`
				} `json:"object"`
				Messages []string `json:"messages"`
			} `json:"violations"`
		} `json:"bindings"`
	} `json:"results"`
}

// violations are c's findings as "policy/binding kind namespace/name: messages", sorted.
func (c compliance) violations() []string {
	out := []string{}
	for _, b := range c.Results.Bindings {
		for _, v := range b.Violations {
			out = append(out, fmt.Sprintf("%s/%s %s %s/%s: %s", b.Policy, b.Binding, v.Object.Kind, v.Object.Namespace, v.Object.Name, strings.Join(v.Messages, "; ")))
		}
	}
	sort.Strings(out)
	return out
}

// TestBackgroundAuditFindsStoredViolations: admitd serve --background-audit
// finds, after the policies are created, exactly the stored objects their
// Audit bindings fail, on the dashboard (behind the server's
// authentication) and as PolicyReports.
func TestBackgroundAuditFindsStoredViolations(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir(), "--background-audit", "--background-audit-interval=1h")
	a.MustKubectl(t, "", "apply", "-f", "testdata/wgpolicy-crds.yaml")
	a.MustKubectl(t, "", "wait", "--for=condition=Established", "crd/policyreports.wgpolicyk8s.io", "crd/clusterpolicyreports.wgpolicyk8s.io")
	a.MustKubectl(t, backgroundAuditObjects(), "apply", "-f", "-")
	a.MustKubectl(t, backgroundAuditConfig, "apply", "-f", "-")

	want := []string{
		"max-keys/max-keys-audit ConfigMap bga-a/three: has 3 keys, more than 2",
		"max-keys/max-keys-audit ConfigMap bga-b/four: has 4 keys, more than 2",
		"team-label/team-label Namespace /bga-a: no team label",
	}
	client := a.HTTPClient(t)
	var got compliance
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		got = getCompliance(t, client, a.URL)
		if slices.Equal(got.violations(), want) || time.Now().After(deadline) {
			break
		}
	}
	if v := got.violations(); !slices.Equal(v, want) {
		t.Fatalf("compliance violations =\n%s\nwant\n%s", strings.Join(v, "\n"), strings.Join(want, "\n"))
	}
	var bindings []string
	for _, b := range got.Results.Bindings {
		bindings = append(bindings, b.Policy+"/"+b.Binding)
	}
	if wantB := []string{"max-keys/max-keys-audit", "team-label/team-label"}; !slices.Equal(bindings, wantB) {
		t.Errorf("bindings = %v, want %v (max-keys-deny has no Audit)", bindings, wantB)
	}

	wantReports := map[string]string{
		"policyreport bga-a":  "fail max-keys/max-keys-audit ConfigMap three",
		"policyreport bga-b":  "fail max-keys/max-keys-audit ConfigMap four",
		"clusterpolicyreport": "fail team-label/team-label Namespace bga-a",
	}
	// the reports are written after the results are shown
	for what, wantResults := range wantReports {
		args := []string{"get", "clusterpolicyreport", "admitd-background-audit", "-o", "json"}
		if ns, ok := strings.CutPrefix(what, "policyreport "); ok {
			args = []string{"get", "policyreport", "admitd-background-audit", "-n", ns, "-o", "json"}
		}
		var results string
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if out, _, err := a.Kubectl(t, "", args...); err == nil {
				results = reportResults(t, out)
			}
			if results == wantResults || time.Now().After(deadline) {
				break
			}
		}
		if results != wantResults {
			t.Errorf("%s results = %q, want %q", what, results, wantResults)
		}
	}
	if out, _, err := a.Kubectl(t, "", "get", "policyreport", "-n", "bga-params", "admitd-background-audit"); err == nil {
		t.Errorf("a PolicyReport in bga-params, which has no violation: %s", out)
	}

	// changes to the stored objects are followed, well within the 1h
	// interval: a ConfigMap mended, another deleted, and their
	// namespaces' reports go
	a.MustKubectl(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: three, namespace: bga-a, labels: {audited: \"yes\"}}\ndata: {k0: v}\n", "apply", "-f", "-")
	a.MustKubectl(t, "", "delete", "configmap", "-n", "bga-b", "four")
	want = want[2:]
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		got = getCompliance(t, client, a.URL)
		if slices.Equal(got.violations(), want) || time.Now().After(deadline) {
			break
		}
	}
	if v := got.violations(); !slices.Equal(v, want) {
		t.Errorf("after the changes, compliance violations =\n%s\nwant\n%s", strings.Join(v, "\n"), strings.Join(want, "\n"))
	}
	for _, ns := range []string{"bga-a", "bga-b"} {
		var out string
		var err error
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if out, _, err = a.Kubectl(t, "", "get", "policyreport", "-n", ns, "admitd-background-audit"); err != nil {
				break
			}
		}
		if err == nil {
			t.Errorf("the PolicyReport of %s, whose violation is gone, is still there: %s", ns, out)
		}
	}

	anonymous := &http.Client{Transport: &http.Transport{TLSClientConfig: client.Transport.(*http.Transport).TLSClientConfig.Clone()}}
	anonymous.Transport.(*http.Transport).TLSClientConfig.Certificates = nil
	resp, err := anonymous.Get(a.URL + "/dashboard/api/compliance")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous GET /dashboard/api/compliance: %s, want 401 or 403", resp.Status)
	}
}

func getCompliance(t *testing.T, client *http.Client, url string) compliance {
	t.Helper()
	resp, err := client.Get(url + "/dashboard/api/compliance")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var c compliance
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &c) != nil || !c.Enabled {
		t.Fatalf("GET /dashboard/api/compliance: %s %s, want 200 with enabled", resp.Status, body)
	}
	return c
}

// reportResults are a report's results as "result policy/rule kind name",
// joined by ", ".
func reportResults(t *testing.T, js string) string {
	t.Helper()
	var rep struct {
		Results []struct {
			Policy, Rule, Result string
			Resources            []struct{ Kind, Name string }
		}
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatalf("%v: %s", err, js)
	}
	var out []string
	for _, r := range rep.Results {
		for _, res := range r.Resources {
			out = append(out, fmt.Sprintf("%s %s/%s %s %s", r.Result, r.Policy, r.Rule, res.Kind, res.Name))
		}
	}
	return strings.Join(out, ", ")
}
