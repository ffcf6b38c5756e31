package audit

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

func ref(ns, name string) ObjectRef {
	return ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: name}
}

func refp(ns, name string) *ObjectRef {
	r := ref(ns, name)
	return &r
}

func TestFailsAtOrAboveTheSeverity(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy Policy
		fails  map[string]bool
	}{
		{"denied", Policy{Denied: []Finding{{Object: ref("a", "x")}}},
			map[string]bool{SeverityDeny: true, SeverityWarn: true, SeverityAnnotate: true, SeverityNone: false}},
		{"mutated", Policy{Mutated: []Finding{{Object: ref("a", "x")}}},
			map[string]bool{SeverityDeny: false, SeverityWarn: false, SeverityMutate: true, SeverityAnnotate: true}},
		{"failed closed", Policy{Errors: []Finding{{Object: ref("a", "x")}}, failedClosed: 1},
			map[string]bool{SeverityDeny: true}},
		{"failed open", Policy{Errors: []Finding{{Object: ref("a", "x")}}},
			map[string]bool{SeverityDeny: false, SeverityAnnotate: false}},
		{"passed", Policy{Passed: []*ObjectRef{refp("a", "x")}}, map[string]bool{SeverityAnnotate: false}},
	} {
		r := &Report{Policies: []*Policy{&tc.policy}}
		for sev, want := range tc.fails {
			if got := r.Fails(sev); got != want {
				t.Errorf("%s: Fails(%s) = %v, want %v", tc.name, sev, got, want)
			}
		}
	}
}

func TestPolicyReportsPerNamespaceAndCluster(t *testing.T) {
	r := newReport("UPDATE")
	r.Policies = []*Policy{{Plugin: "ValidatingAdmissionPolicy", Name: "p", Configuration: "b",
		Denied:  []Finding{{Object: ref("b", "x"), Message: "no"}},
		Mutated: []Finding{{Object: ref("a", "y"), Patch: []byte(`[{"op":"add","path":"/x","value":1}]`)}},
		Passed:  []*ObjectRef{refp("a", "z"), {APIVersion: "v1", Kind: "Namespace", Name: "a"}}}}
	reps := policyReports(r, time.Unix(100, 0))
	if len(reps) != 3 || reps[0].Metadata["namespace"] != "a" || reps[1].Metadata["namespace"] != "b" || reps[2].Kind != "ClusterPolicyReport" {
		t.Fatalf("reports %+v, want PolicyReports of a and b, then the ClusterPolicyReport", reps)
	}
	if s := reps[0].Summary; s["pass"] != 1 || s["warn"] != 1 || s["fail"] != 0 {
		t.Errorf("summary of a = %v, want pass 1, warn 1 (the mutation)", s)
	}
	if e := reps[1].Results[0]; e.Result != "fail" || e.Policy != "p" || e.Rule != "b" || e.Message != "no" || e.Timestamp.Seconds != 100 {
		t.Errorf("result in b = %+v", e)
	}
	if _, ok := reps[2].Metadata["namespace"]; ok {
		t.Errorf("the ClusterPolicyReport has a namespace: %v", reps[2].Metadata)
	}
	var out bytes.Buffer
	if err := Write(&out, r, "policyreport"); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(out.String(), "---\n")
	if len(docs) != 3 {
		t.Fatalf("%d YAML documents, want 3:\n%s", len(docs), out.String())
	}
	for _, d := range docs {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil || m["apiVersion"] != "wgpolicyk8s.io/v1alpha2" {
			t.Errorf("document %q: %v", d, err)
		}
	}
}
