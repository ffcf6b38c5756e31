package audit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const header = "apiVersion: audit.k8s.io/v1\nkind: Policy\n"

func TestParsePolicy(t *testing.T) {
	yes := true
	tests := []struct {
		name string
		in   string
		want *Policy // compared on Rules, OmitStages, OmitManagedFields
		// warn is a substring of the warnings, if any are expected.
		warn string
	}{
		{
			name: "full",
			in: header + `omitStages: [RequestReceived]
omitManagedFields: true
metadata: {name: p}
rules:
- level: RequestResponse
  users: [tim]
  userGroups: [humans]
  verbs: [get, list]
  namespaces: ["", default]
  resources:
  - group: ""
    resources: [pods, pods/log, "*/status"]
    resourceNames: [busybox]
  - group: "*"
  omitStages: [Panic]
  omitManagedFields: true
- level: Metadata
  nonResourceURLs: ["/logs*", "*"]
- level: None
`,
			want: &Policy{OmitStages: []Stage{StageRequestReceived}, OmitManagedFields: true, Rules: []PolicyRule{
				{Level: LevelRequestResponse, Users: []string{"tim"}, UserGroups: []string{"humans"}, Verbs: []string{"get", "list"},
					Namespaces: []string{"", "default"}, Resources: []GroupResources{
						{Resources: []string{"pods", "pods/log", "*/status"}, ResourceNames: []string{"busybox"}}, {Group: "*"}},
					OmitStages: []Stage{StagePanic}, OmitManagedFields: &yes},
				{Level: LevelMetadata, NonResourceURLs: []string{"/logs*", "*"}},
				{Level: LevelNone},
			}},
		},
		{
			name: "json",
			in:   `{"apiVersion":"audit.k8s.io/v1","kind":"Policy","rules":[{"level":"Request"}]}`,
			want: &Policy{Rules: []PolicyRule{{Level: LevelRequest}}},
		},
		{
			name: "kind defaults to Policy",
			in:   "apiVersion: audit.k8s.io/v1\nrules: [{level: Metadata}]",
			want: &Policy{Rules: []PolicyRule{{Level: LevelMetadata}}},
		},
		{
			name: "unknown and duplicate fields are accepted leniently",
			in:   header + "foo: 1\nrules:\n- level: Metadata\n  level: Request\n",
			want: &Policy{Rules: []PolicyRule{{Level: LevelRequest}}},
			warn: `unknown field "foo"`,
		},
		{
			name: "duplicate JSON fields are accepted leniently",
			in:   `{"apiVersion":"audit.k8s.io/v1","kind":"Policy","rules":[{"level":"None","level":"Metadata"}]}`,
			want: &Policy{Rules: []PolicyRule{{Level: LevelMetadata}}},
			warn: `duplicate field "rules[0].level"`,
		},
		{
			name: "type and kind are found case-insensitively, fields are not",
			in:   "APIVERSION: audit.k8s.io/v1\nKIND: Policy\nrules: [{level: Metadata}]",
			want: &Policy{Rules: []PolicyRule{{Level: LevelMetadata}}},
			warn: `unknown field "APIVERSION"`,
		},
		{
			name: "only the first document is read",
			in:   header + "rules: [{level: None}]\n---\nfoo: bar\n",
			want: &Policy{Rules: []PolicyRule{{Level: LevelNone}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePolicy([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParsePolicy() error = %v", err)
			}
			if g, w := policyJSON(got), policyJSON(tt.want); g != w {
				t.Errorf("ParsePolicy() = %s, want %s", g, w)
			}
			warnings := strings.Join(got.Warnings, "\n")
			if (tt.warn == "") != (warnings == "") || !strings.Contains(warnings, tt.warn) {
				t.Errorf("ParsePolicy() warnings = %q, want %q", warnings, tt.warn)
			}
			if got.APIVersion != APIVersion || got.Kind != KindPolicy {
				t.Errorf("ParsePolicy() type = %s %s, want %s %s", got.APIVersion, got.Kind, APIVersion, KindPolicy)
			}
		})
	}
}

// The expected errors are those of upstream's LoadPolicyFromBytes (less the
// scheme location some of them end with).
func TestParsePolicyErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"no rules", header + "rules: []", "loaded illegal policy with 0 rules"},
		{"empty", "", "unknown group version field audit.k8s.io/__internal, Kind=Policy in policy"},
		{"no apiVersion", "kind: Policy\nrules: [{level: None}]", "unknown group version field audit.k8s.io/__internal, Kind=Policy in policy"},
		{"v1beta1", "apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: None}]",
			`failed decoding: no kind "Policy" is registered for version "audit.k8s.io/v1beta1"`},
		{"wrong kind", "apiVersion: audit.k8s.io/v1\nkind: Event\n", "failed decoding: converting (v1.Event) to (audit.Policy): unknown conversion"},
		{"unknown kind", "apiVersion: audit.k8s.io/v1\nkind: Foo\n", `failed decoding: no kind "Foo" is registered for version "audit.k8s.io/v1"`},
		{"bad group version", "apiVersion: a/b/c\nkind: Policy\n", "failed decoding: unexpected GroupVersion string: a/b/c"},
		{"not an object", "- a\n- b\n", "failed decoding: couldn't get version/kind; json parse error: json: cannot unmarshal array"},
		{"bad yaml", ": : :", "failed decoding: yaml: did not find expected key"},
		{"JSON is not read as YAML", `{"apiVersion":"audit.k8s.io/v1","rules":[{"level":"Request"}]}00`,
			"failed decoding: couldn't get version/kind; json parse error: invalid character '0' after top-level value"},
		{"wrong type", header + "rules: [{level: 3}]", "failed decoding: json: cannot unmarshal number"},
		{"missing level", header + "rules: [{Level: Metadata}]", "rules[0].level: Required value"},
		{"unknown level", header + "rules: [{level: Everything}]",
			`rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"`},
		{"bad omitStages", header + "omitStages: [Foo]\nrules: [{level: None, omitStages: [Bar]}]",
			`[omitStages[0]: Invalid value: "Foo": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic, ` +
				`rules[0].omitStages[0]: Invalid value: "Bar": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic]`},
		{"bad nonResourceURLs", header + `rules: [{level: None, nonResourceURLs: ["", "/*a*"]}]`,
			`[rules[0].nonResourceURLs[0]: Invalid value: "": non-resource URL rules must begin with a '/' character, ` +
				`rules[0].nonResourceURLs[1]: Invalid value: "/*a*": non-resource URL wildcards '*' must be the final character of the rule]`},
		{"resources and nonResourceURLs", header + `rules: [{level: None, namespaces: [""], nonResourceURLs: ["/x"]}]`,
			`rules[0].nonResourceURLs: Invalid value: ["/x"]: rules cannot apply to both regular resources and non-resource URLs`},
		{"bad group", header + `rules: [{level: None, resources: [{group: apps/v1}]}]`,
			`rules[0].resources.group: Invalid value: "apps/v1": a lowercase RFC 1123 subdomain`},
		{"resourceNames without resources", header + `rules: [{level: None, resources: [{resourceNames: [x]}]}]`,
			`rules[0].resources.resourceNames: Invalid value: ["x"]: using resourceNames requires at least one resource`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePolicy([]byte(tt.in))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("ParsePolicy() error = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestLoadPolicy(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte(header+"rules: [{level: RequestResponse}]"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(header+"rules: []"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := LoadPolicy(good)
	if err != nil || p.Rules[0].Level != LevelRequestResponse {
		t.Errorf("LoadPolicy(good) = %v, %v; want one RequestResponse rule", p, err)
	}
	for path, want := range map[string]string{
		"":                            "file path not specified",
		filepath.Join(dir, "missing"): "failed to read file path",
		bad:                           "loaded illegal policy with 0 rules: from file " + bad,
	} {
		if _, err := LoadPolicy(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadPolicy(%q) error = %v, want %q", path, err, want)
		}
	}
}

// FuzzParsePolicy checks that the parser never panics and that an accepted
// policy is valid, evaluates safely and survives a JSON round trip.
func FuzzParsePolicy(f *testing.F) {
	f.Add([]byte(header + "rules: [{level: Metadata}]"))
	f.Add([]byte(header + "omitStages: [Panic]\nrules:\n- level: Request\n  resources: [{group: '*', resources: ['*/status'], resourceNames: [a]}]\n  namespaces: ['']\n- level: None\n  nonResourceURLs: ['/logs*']\n  omitManagedFields: true\n"))
	f.Add([]byte(`{"apiVersion":"audit.k8s.io/v1","rules":[{"level":"None","users":["a"],"userGroups":["b"],"verbs":["get"]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePolicy(data)
		if err != nil {
			return
		}
		if len(p.Rules) == 0 || len(validatePolicy(p)) > 0 {
			t.Fatalf("ParsePolicy(%q) accepted an invalid policy", data)
		}
		for _, a := range checkerReqs {
			rc := p.Evaluate(a)
			if rc.Level != LevelNone && !ruleLevel(p, rc.Level) {
				t.Fatalf("Evaluate() = %s, not a rule's level", rc.Level)
			}
		}
		js, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("Marshal(policy) error = %v", err)
		}
		p2, err := ParsePolicy(js)
		if err != nil {
			t.Fatalf("ParsePolicy(Marshal(%q)) error = %v", data, err)
		}
		if a, b := policyJSON(p), policyJSON(p2); a != b {
			t.Fatalf("round trip changed the policy:\n%s\n%s", a, b)
		}
	})
}

func ruleLevel(p *Policy, l Level) bool {
	for _, r := range p.Rules {
		if r.Level == l {
			return true
		}
	}
	return false
}

// policyJSON renders the parts of a policy that affect evaluation.
func policyJSON(p *Policy) string {
	b, _ := json.Marshal(struct {
		Rules             []PolicyRule
		OmitStages        []Stage `json:",omitempty"`
		OmitManagedFields bool
	}{p.Rules, p.OmitStages, p.OmitManagedFields})
	return string(b)
}
