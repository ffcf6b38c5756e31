package audit

import (
	"slices"
	"strings"
	"testing"
)

// The requests and rules of upstream's pkg/audit/policy/checker_test.go.
var (
	tim         = []string{"humans", "developers"}
	checkerReqs = map[string]Attributes{
		"namespaced": {User: "tim@k8s.io", Groups: tim, Verb: "get", ResourceRequest: true,
			Namespace: "default", Resource: "pods", Name: "busybox", Path: "/api/v1/namespaces/default/pods/busybox"},
		"cluster": {User: "tim@k8s.io", Groups: tim, Verb: "get", ResourceRequest: true,
			APIGroup: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: "edit",
			Path: "/apis/rbac.authorization.k8s.io/v1beta1/clusterroles/edit"},
		"nonResource": {User: "tim@k8s.io", Groups: tim, Verb: "get", Path: "/logs/kubelet.log"},
		"subresource": {User: "tim@k8s.io", Groups: tim, Verb: "get", ResourceRequest: true,
			Namespace: "default", Resource: "pods", Subresource: "log", Name: "busybox", Path: "/api/v1/namespaces/default/pods/busybox"},
		"Unauthorized": {Verb: "get", ResourceRequest: true, Namespace: "default", Resource: "pods", Name: "busybox",
			Path: "/api/v1/namespaces/default/pods/busybox"},
		"ClusterRoleUpdate": {User: "tim@k8s.io", Groups: tim, Verb: "update", ResourceRequest: true,
			APIGroup: "rbac.authorization.k8s.io", Resource: "clusterroles", Subresource: "status", Name: "somerole",
			Path: "/apis/rbac.authorization.k8s.io/v1beta1/clusterroles/somerole"},
	}
	checkerRules = map[string]PolicyRule{
		"default":         {Level: LevelMetadata},
		"create":          {Level: LevelRequest, Verbs: []string{"create"}},
		"tims":            {Level: LevelMetadata, Users: []string{"tim@k8s.io"}},
		"humans":          {Level: LevelMetadata, UserGroups: []string{"humans"}},
		"serviceAccounts": {Level: LevelRequest, UserGroups: []string{"system:serviceaccounts"}},
		"getPods": {Level: LevelRequestResponse, Verbs: []string{"get"},
			Resources: []GroupResources{{Resources: []string{"pods"}}}},
		"getPodLogs": {Level: LevelRequest, Verbs: []string{"get"},
			Resources: []GroupResources{{Resources: []string{"pods/log"}}}},
		"getPodWildcardMatching": {Level: LevelRequest, Verbs: []string{"get"},
			Resources: []GroupResources{{Resources: []string{"*"}}}},
		"getPodResourceWildcardMatching": {Level: LevelRequest, Verbs: []string{"get"},
			Resources: []GroupResources{{Resources: []string{"*/log"}}}},
		"getPodSubResourceWildcardMatching": {Level: LevelRequest, Verbs: []string{"get"},
			Resources: []GroupResources{{Resources: []string{"pods/*"}}}},
		"getClusterRoles": {Level: LevelRequestResponse, Verbs: []string{"get"},
			Resources:  []GroupResources{{Group: "rbac.authorization.k8s.io", Resources: []string{"clusterroles"}}},
			Namespaces: []string{""}},
		"getGroupWildCardMatchingWithSubresourceWildcardMatching": {Level: LevelRequestResponse, Verbs: []string{"update"},
			Resources: []GroupResources{{Group: "*", Resources: []string{"*/status"}}}},
		"getLogs":    {Level: LevelRequestResponse, Verbs: []string{"get"}, NonResourceURLs: []string{"/logs*"}},
		"getMetrics": {Level: LevelRequest, Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics"}},
		"clusterRoleEdit": {Level: LevelRequest, Resources: []GroupResources{{Group: "rbac.authorization.k8s.io",
			Resources: []string{"clusterroles"}, ResourceNames: []string{"edit"}}}},
		"omit RequestReceived": {Level: LevelRequest, OmitStages: []Stage{StageRequestReceived}},
		"only audit panic": {Level: LevelRequest,
			OmitStages: []Stage{StageRequestReceived, StageResponseStarted, StageResponseComplete}},
	}
)

type checkerCase struct {
	req   string
	want  Level
	rules []string
}

// levelCases is upstream's testAuditLevel.
var levelCases = []checkerCase{
	{"namespaced", LevelMetadata, []string{"default"}},
	{"namespaced", LevelNone, []string{"create"}},
	{"namespaced", LevelMetadata, []string{"tims"}},
	{"namespaced", LevelMetadata, []string{"humans"}},
	{"namespaced", LevelNone, []string{"serviceAccounts"}},
	{"namespaced", LevelRequestResponse, []string{"getPods"}},
	{"namespaced", LevelNone, []string{"getClusterRoles"}},
	{"namespaced", LevelNone, []string{"getLogs"}},
	{"namespaced", LevelNone, []string{"getMetrics"}},
	{"namespaced", LevelMetadata, []string{"getMetrics", "serviceAccounts", "default"}},
	{"namespaced", LevelRequestResponse, []string{"getMetrics", "getPods", "default"}},
	{"namespaced", LevelRequestResponse, []string{"getPodLogs", "getPods"}},

	{"cluster", LevelMetadata, []string{"default"}},
	{"cluster", LevelNone, []string{"create"}},
	{"cluster", LevelMetadata, []string{"tims"}},
	{"cluster", LevelMetadata, []string{"humans"}},
	{"cluster", LevelNone, []string{"serviceAccounts"}},
	{"cluster", LevelNone, []string{"getPods"}},
	{"cluster", LevelRequestResponse, []string{"getClusterRoles"}},
	{"cluster", LevelRequest, []string{"clusterRoleEdit", "getClusterRoles"}},
	{"cluster", LevelNone, []string{"getLogs"}},
	{"cluster", LevelNone, []string{"getMetrics"}},
	{"cluster", LevelMetadata, []string{"getMetrics", "serviceAccounts", "default"}},
	{"cluster", LevelRequestResponse, []string{"getMetrics", "getClusterRoles", "default"}},
	{"cluster", LevelNone, []string{"getPodLogs", "getPods"}},

	{"nonResource", LevelMetadata, []string{"default"}},
	{"nonResource", LevelNone, []string{"create"}},
	{"nonResource", LevelMetadata, []string{"tims"}},
	{"nonResource", LevelMetadata, []string{"humans"}},
	{"nonResource", LevelNone, []string{"serviceAccounts"}},
	{"nonResource", LevelNone, []string{"getPods"}},
	{"nonResource", LevelNone, []string{"getClusterRoles"}},
	{"nonResource", LevelRequestResponse, []string{"getLogs"}},
	{"nonResource", LevelNone, []string{"getMetrics"}},
	{"nonResource", LevelMetadata, []string{"getMetrics", "serviceAccounts", "default"}},
	{"nonResource", LevelRequestResponse, []string{"getLogs", "getClusterRoles", "default"}},
	{"nonResource", LevelNone, []string{"getPodLogs", "getPods"}},

	{"subresource", LevelRequest, []string{"getPodLogs", "getPods"}},
	{"subresource", LevelRequest, []string{"getPodWildcardMatching"}},
	{"subresource", LevelRequest, []string{"getPodResourceWildcardMatching"}},
	{"subresource", LevelRequest, []string{"getPodSubResourceWildcardMatching"}},

	{"Unauthorized", LevelNone, []string{"tims"}},
	{"Unauthorized", LevelMetadata, []string{"tims", "default"}},
	{"Unauthorized", LevelNone, []string{"humans"}},
	{"Unauthorized", LevelMetadata, []string{"humans", "default"}},
	{"ClusterRoleUpdate", LevelRequestResponse, []string{"getGroupWildCardMatchingWithSubresourceWildcardMatching"}},
}

func checkerPolicy(t *testing.T, policyStages []Stage, ruleNames []string) *Policy {
	t.Helper()
	p := &Policy{OmitStages: policyStages}
	for _, name := range ruleNames {
		r, ok := checkerRules[name]
		if !ok {
			t.Fatalf("no rule %q", name)
		}
		p.Rules = append(p.Rules, r)
	}
	return p
}

func runCheckerCase(t *testing.T, c checkerCase, policyStages, wantStages []Stage) {
	t.Helper()
	got := checkerPolicy(t, policyStages, c.rules).Evaluate(checkerReqs[c.req])
	if got.Level != c.want {
		t.Errorf("Evaluate(%s) with rules %s: level = %s, want %s", c.req, strings.Join(c.rules, ","), got.Level, c.want)
	}
	if !sameStages(got.OmitStages, wantStages) {
		t.Errorf("Evaluate(%s) with rules %s: omitStages = %v, want %v", c.req, strings.Join(c.rules, ","), got.OmitStages, wantStages)
	}
}

func TestEvaluateLevel(t *testing.T) {
	for _, stages := range [][]Stage{nil, {StageRequestReceived, StageResponseStarted}} {
		for _, c := range levelCases {
			t.Run(c.req+"/"+strings.Join(c.rules, ","), func(t *testing.T) { runCheckerCase(t, c, stages, stages) })
		}
	}
}

func TestEvaluateOmitStages(t *testing.T) {
	rr := []Stage{StageRequestReceived}
	panicOnly := []Stage{StageRequestReceived, StageResponseStarted, StageResponseComplete}
	policyWide := []Stage{StageRequestReceived, StageResponseStarted}
	tests := []struct {
		name         string
		c            checkerCase
		policyStages []Stage
		want         []Stage
	}{
		{"rule", checkerCase{"namespaced", LevelRequest, []string{"omit RequestReceived", "getPods", "default"}}, nil, rr},
		{"rule", checkerCase{"namespaced", LevelRequest, []string{"only audit panic", "getPods", "default"}}, nil, panicOnly},
		{"rule", checkerCase{"cluster", LevelRequest, []string{"omit RequestReceived", "getPods", "default"}}, nil, rr},
		{"rule", checkerCase{"cluster", LevelRequest, []string{"only audit panic", "getPods", "default"}}, nil, panicOnly},
		{"rule", checkerCase{"nonResource", LevelRequest, []string{"omit RequestReceived", "getPods", "default"}}, nil, rr},
		{"rule", checkerCase{"nonResource", LevelRequest, []string{"only audit panic", "getPods", "default"}}, nil, panicOnly},
		{"policy", checkerCase{"namespaced", LevelRequest, []string{"omit RequestReceived", "getPods", "default"}}, policyWide, policyWide},
		{"policy", checkerCase{"namespaced", LevelRequest, []string{"only audit panic", "getPods", "default"}}, policyWide, panicOnly},
		{"policy", checkerCase{"cluster", LevelRequest, []string{"omit RequestReceived", "getPods", "default"}}, policyWide, policyWide},
		{"policy", checkerCase{"cluster", LevelRequest, []string{"only audit panic", "getPods", "default"}}, policyWide, panicOnly},
		{"policy", checkerCase{"nonResource", LevelMetadata, []string{"default", "omit RequestReceived", "getPods"}}, policyWide, policyWide},
		{"policy", checkerCase{"nonResource", LevelRequest, []string{"only audit panic", "getPods", "default"}}, policyWide, panicOnly},
		{"no match", checkerCase{"nonResource", LevelNone, []string{"getPods"}}, []Stage{StagePanic}, []Stage{StagePanic}},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.c.req+"/"+strings.Join(tt.c.rules, ","), func(t *testing.T) {
			runCheckerCase(t, tt.c, tt.policyStages, tt.want)
		})
	}
}

// TestEvaluateMatching covers matching details upstream's table leaves out.
func TestEvaluateMatching(t *testing.T) {
	podStatus := Attributes{User: "u", Verb: "update", ResourceRequest: true, Namespace: "ns", Resource: "pods", Subresource: "status", Name: "p"}
	pods := Attributes{User: "u", Verb: "update", ResourceRequest: true, Namespace: "ns", Resource: "pods", Name: "p"}
	create := Attributes{User: "u", Verb: "create", ResourceRequest: true, Namespace: "ns", Resource: "pods"}
	tests := []struct {
		name  string
		rule  PolicyRule
		attrs Attributes
		want  bool
	}{
		{"pods does not match pods/status", PolicyRule{Resources: []GroupResources{{Resources: []string{"pods"}}}}, podStatus, false},
		{"pods/* matches pods itself", PolicyRule{Resources: []GroupResources{{Resources: []string{"pods/*"}}}}, pods, true},
		{"*/status needs a subresource", PolicyRule{Resources: []GroupResources{{Resources: []string{"*/status"}}}}, pods, false},
		{"* matches subresources", PolicyRule{Resources: []GroupResources{{Resources: []string{"*"}}}}, podStatus, true},
		{"group must match", PolicyRule{Resources: []GroupResources{{Group: "apps", Resources: []string{"*"}}}}, pods, false},
		{"group without resources matches all of it", PolicyRule{Resources: []GroupResources{{Group: ""}}}, podStatus, true},
		{"resourceNames never match create", PolicyRule{Resources: []GroupResources{{Resources: []string{"pods"}, ResourceNames: []string{"p"}}}}, create, false},
		{"resourceNames match the name", PolicyRule{Resources: []GroupResources{{Resources: []string{"pods"}, ResourceNames: []string{"p"}}}}, pods, true},
		{"later group resources are tried", PolicyRule{Resources: []GroupResources{{Group: "apps"}, {Resources: []string{"pods"}}}}, pods, true},
		{"namespaces alone need a resource request", PolicyRule{Namespaces: []string{""}}, Attributes{Verb: "get", Path: "/healthz"}, false},
		{"empty namespace matches cluster scope", PolicyRule{Namespaces: []string{""}}, Attributes{Verb: "get", ResourceRequest: true, Resource: "nodes"}, true},
		{"nonResourceURLs skip resource requests", PolicyRule{NonResourceURLs: []string{"*"}}, pods, false},
		{"nonResourceURL prefix", PolicyRule{NonResourceURLs: []string{"/healthz*"}}, Attributes{Verb: "get", Path: "/healthz/etcd"}, true},
		{"nonResourceURL exact", PolicyRule{NonResourceURLs: []string{"/healthz"}}, Attributes{Verb: "get", Path: "/healthz/etcd"}, false},
		{"users need a user", PolicyRule{Users: []string{""}}, Attributes{Verb: "get"}, false},
		{"any listed group", PolicyRule{UserGroups: []string{"a", "b"}}, Attributes{Groups: []string{"c", "b"}}, true},
		{"verbs", PolicyRule{Verbs: []string{"get"}}, pods, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.rule.Level = LevelMetadata
			p := &Policy{Rules: []PolicyRule{tt.rule}}
			if got := p.Evaluate(tt.attrs).Level == LevelMetadata; got != tt.want {
				t.Errorf("Match(%+v, %+v) = %v, want %v", tt.rule, tt.attrs, got, tt.want)
			}
		})
	}
}

func TestEvaluateOmitManagedFields(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name          string
		policyDefault bool
		rule          *bool
		want          bool
	}{
		{"global false, rule unset", false, nil, false},
		{"global true, rule unset", true, nil, true},
		{"global true, rule false", true, &no, false},
		{"global false, rule true", false, &yes, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Policy{OmitManagedFields: tt.policyDefault,
				Rules: []PolicyRule{{Level: LevelRequestResponse, Verbs: []string{"get"}, OmitManagedFields: tt.rule}}}
			if got := p.Evaluate(Attributes{Verb: "get"}).OmitManagedFields; got != tt.want {
				t.Errorf("OmitManagedFields = %v, want %v", got, tt.want)
			}
		})
	}
	var nilPolicy *Policy
	if got := nilPolicy.Evaluate(Attributes{Verb: "get"}); got.Level != LevelNone {
		t.Errorf("nil policy: level = %s, want None", got.Level)
	}
}

func TestUnionStages(t *testing.T) {
	tests := []struct{ a, b, want []Stage }{
		{nil, nil, nil},
		{[]Stage{StageRequestReceived}, nil, []Stage{StageRequestReceived}},
		{[]Stage{StageRequestReceived}, []Stage{StageRequestReceived}, []Stage{StageRequestReceived}},
		{[]Stage{StageRequestReceived}, []Stage{StageResponseStarted}, []Stage{StageRequestReceived, StageResponseStarted}},
		{[]Stage{StageRequestReceived, StageRequestReceived}, []Stage{StageRequestReceived}, []Stage{StageRequestReceived}},
		{[]Stage{StageResponseStarted, StageRequestReceived}, []Stage{StagePanic, StageRequestReceived},
			[]Stage{StageRequestReceived, StageResponseStarted, StagePanic}},
	}
	for _, tt := range tests {
		if got := unionStages(tt.a, tt.b); !slices.Equal(got, tt.want) {
			t.Errorf("unionStages(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func sameStages(a, b []Stage) bool {
	return slices.Equal(unionStages(a), unionStages(b))
}
