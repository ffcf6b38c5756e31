package audit

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/admitd/admitd/internal/evaluate"
)

// paramConfig reads a param by name (limits, in namespace params) that
// only the audited objects have, and params by selector (ConfigMaps
// labelled retired-teams, also only among the objects).
const paramConfig = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  failurePolicy: Fail
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}]
  validations:
  - expression: "object.spec.replicas <= int(params.data.maxReplicas)"
    messageExpression: "'at most ' + params.data.maxReplicas + ' replicas'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas}
spec:
  policyName: max-replicas
  validationActions: [Deny]
  paramRef: {name: limits, namespace: params, parameterNotFoundAction: Deny}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: team-list}
spec:
  failurePolicy: Fail
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods]}]
  validations:
  - expression: "!has(object.metadata.labels) || !('team' in object.metadata.labels) || !has(params.data) || !(object.metadata.labels.team in params.data)"
    message: the team is retired
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: team-list}
spec:
  policyName: team-list
  validationActions: [Warn, Audit]
  paramRef: {selector: {matchLabels: {retired-teams: "true"}}, parameterNotFoundAction: Allow}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: owner}
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}]
  matchConditions:
  - {name: no-owner, expression: "!has(object.metadata.labels) || !('owner' in object.metadata.labels)"}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: "Object{metadata: Object.metadata{labels: {'owner': 'platform'}}}"
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: owner}
spec: {policyName: owner}`

// paramObjects are objects in a file each: deployments and pods that the
// params judge, the params, ConfigMaps, Secrets and a Namespace.
func paramObjects(t *testing.T) []string {
	t.Helper()
	docs := []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: limits, namespace: params}\ndata: {maxReplicas: \"4\"}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: retired, namespace: prod, labels: {retired-teams: \"true\"}}\ndata: {t0: \"\"}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: retired, namespace: dev, labels: {retired-teams: \"true\"}}\ndata: {t1: \"\"}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: prod, labels: {env: prod}}",
	}
	for i := range 36 {
		ns := []string{"prod", "dev", "other"}[i%3]
		switch i % 4 {
		case 0:
			docs = append(docs, fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: dep-%d, namespace: %s}\nspec: {replicas: %d, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: img}]}}}", i, ns, i%7))
		case 1:
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: pod-%d, namespace: %s, labels: {team: t%d}}\nspec: {containers: [{name: c, image: img}]}", i, ns, i%3))
		case 2:
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d, namespace: %s}\ndata: {k: v}", i, ns))
		case 3:
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: s-%d, namespace: %s}\ndata: {k: dg==}", i, ns))
		}
	}
	dir := t.TempDir()
	var paths []string
	for i, doc := range docs {
		p := filepath.Join(dir, fmt.Sprintf("obj-%02d.yaml", i))
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestReportDoesNotDependOnTheOrderOfTheObjects: objects that are params
// of the configuration (by name and by selector) are there for every
// object, whether it comes before or after them; the report of the
// objects in any order, on one worker or four, as UPDATEs and as CREATEs,
// is the same byte for byte in every format.
func TestReportDoesNotDependOnTheOrderOfTheObjects(t *testing.T) {
	paths := paramObjects(t)
	config := objects(t, paramConfig)
	reversed := slices.Clone(paths)
	slices.Reverse(reversed)
	shuffled := slices.Clone(paths)
	rand.New(rand.NewPCG(28, 1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	orders := map[string][]string{"given": paths, "reversed": reversed, "shuffled": shuffled}
	for _, asCreate := range []bool{false, true} {
		var first map[string][]byte
		for _, order := range []string{"given", "reversed", "shuffled"} {
			for _, workers := range []int{1, 4} {
				src, err := LoadFiles(orders[order]...)
				if err != nil {
					t.Fatal(err)
				}
				r, err := Run(context.Background(), src, Options{Config: config, AsCreate: asCreate, Workers: workers})
				if err != nil {
					t.Fatal(err)
				}
				got := writeAll(t, r)
				if first == nil {
					first = got
					checkParamsSeen(t, asCreate, r, string(got["text"]))
					continue
				}
				for _, format := range Formats {
					if !bytes.Equal(got[format], first[format]) {
						t.Errorf("as create %v, %s order, %d workers: -o %s differs from the given order's on one worker:\n%s\n--- given order, one worker:\n%s",
							asCreate, order, workers, format, got[format], first[format])
					}
				}
			}
		}
	}
}

// checkParamsSeen: every deployment saw the named param, every pod the
// selected ones of its namespace.
func checkParamsSeen(t *testing.T, asCreate bool, r *Report, text string) {
	t.Helper()
	if strings.Contains(text, "no params found") {
		t.Errorf("as create %v: an object was evaluated without its params:\n%s", asCreate, text)
	}
	var denied []string
	for _, f := range find(t, r, "ValidatingAdmissionPolicy", "max-replicas", "max-replicas").Denied {
		denied = append(denied, f.Object.Name+": "+f.Message)
	}
	// in namespaces other and prod
	if want := []string{"dep-20: at most 4 replicas", "dep-12: at most 4 replicas"}; !slices.Equal(denied, want) {
		t.Errorf("as create %v: max-replicas denied %v, want %v", asCreate, denied, want)
	}
	// t0 is retired in prod, t1 in dev
	if got, want := names(find(t, r, "ValidatingAdmissionPolicy", "team-list", "team-list").Warned),
		[]string{"dev/pod-1", "dev/pod-13", "dev/pod-25", "prod/pod-21", "prod/pod-33", "prod/pod-9"}; !slices.Equal(got, want) {
		t.Errorf("as create %v: team-list warned %v, want %v", asCreate, got, want)
	}
}

// namesakeConfig has a param (limits) and binds it with Deny when it is
// missing.
const namesakeConfig = `apiVersion: v1
kind: Namespace
metadata: {name: params}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: limits, namespace: params}
data: {maxReplicas: "5"}
---
` + "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: max-replicas}\nspec:\n  failurePolicy: Fail\n  paramKind: {apiVersion: v1, kind: ConfigMap}\n  matchConstraints:\n    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}]\n  validations:\n  - expression: \"object.spec.replicas <= int(params.data.maxReplicas)\"\n    messageExpression: \"'at most ' + params.data.maxReplicas + ' replicas'\"\n" + `---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas}
spec:
  policyName: max-replicas
  validationActions: [Deny]
  paramRef: {name: limits, namespace: params, parameterNotFoundAction: Deny}`

// TestConfigurationOutlivesItsNamesakes: an audited object of the same
// kind and name as an object of the configuration (here its param, with
// another value) is evaluated in its place, and the configuration's is
// there again for the objects after it, as UPDATEs and as CREATEs.
func TestConfigurationOutlivesItsNamesakes(t *testing.T) {
	for _, asCreate := range []bool{false, true} {
		src := &Files{Objects: objects(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: limits, namespace: params}
data: {maxReplicas: "2"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: few, namespace: apps}
spec: {replicas: 3, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: img}]}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: many, namespace: apps}
spec: {replicas: 7, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: img}]}}}`)}
		r, err := Run(context.Background(), src, Options{Config: objects(t, namesakeConfig), AsCreate: asCreate, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		var denied []string
		for _, f := range find(t, r, "ValidatingAdmissionPolicy", "max-replicas", "max-replicas").Denied {
			denied = append(denied, f.Object.Name+": "+f.Message)
		}
		if want := []string{"many: at most 5 replicas"}; !slices.Equal(denied, want) {
			t.Errorf("as create %v: denied %v, want %v (the configuration's param, whatever the audited namesake says)", asCreate, denied, want)
		}
		if len(r.NotEvaluated) != 0 || r.Objects != 3 {
			t.Errorf("as create %v: %d objects evaluated, not evaluated %+v; want 3, none", asCreate, r.Objects, r.NotEvaluated)
		}
	}
}

// seededConfig denies a pod whose service account may not read the
// ConfigMaps of its namespace (the policies' CEL authorizer, over RBAC).
const seededConfig = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: sa-reads-configmaps}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods]}]
  validations:
  - expression: "authorizer.serviceAccount(object.metadata.namespace, object.spec.serviceAccountName).group('').resource('configmaps').namespace(object.metadata.namespace).check('get').allowed()"
    message: its service account cannot read configmaps
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: sa-reads-configmaps}
spec:
  policyName: sa-reads-configmaps
  validationActions: [Deny]`

// TestSeededKindsServeEveryObject: the ServiceAccount, Role and
// RoleBinding among the objects, listed after the pods, are there for
// every pod (the RBAC the policy's authorizer reads under
// --authorization-mode RBAC, the ServiceAccount the ServiceAccount plugin
// looks up on a CREATE), as UPDATEs and as CREATEs, on one worker and
// four.
func TestSeededKindsServeEveryObject(t *testing.T) {
	objs := `apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: apps}
spec: {serviceAccountName: builder, containers: [{name: c, image: img}]}
---
apiVersion: v1
kind: Pod
metadata: {name: p2, namespace: apps}
spec: {serviceAccountName: default, containers: [{name: c, image: img}]}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: builder, namespace: apps}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: apps}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: builder-reads, namespace: apps}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects: [{kind: ServiceAccount, name: builder, namespace: apps}]`
	for _, asCreate := range []bool{false, true} {
		for _, workers := range []int{1, 4} {
			r, err := Run(context.Background(), &Files{Objects: objects(t, objs)}, Options{Config: objects(t, seededConfig), AsCreate: asCreate, Workers: workers,
				Server: evaluate.ServerConfig{AuthorizationModes: []string{"RBAC"}}})
			if err != nil {
				t.Fatal(err)
			}
			if got := names(find(t, r, "ValidatingAdmissionPolicy", "sa-reads-configmaps", "sa-reads-configmaps").Denied); !slices.Equal(got, []string{"apps/p2"}) {
				t.Errorf("as create %v, %d workers: denied %v, want [apps/p2] (p1's service account is bound to read them)", asCreate, workers, got)
			}
			if text := string(writeAll(t, r)["text"]); strings.Contains(text, `"builder" not found`) {
				t.Errorf("as create %v, %d workers: the service account was missing for p1:\n%s", asCreate, workers, text)
			}
		}
	}
}

// TestSeededQuotaKeepsItsUsage: a ResourceQuota among the objects, listed
// after the pods, keeps the usage it records (no in-process quota
// controller recounts it) and refuses the CREATE of a pod over it.
func TestSeededQuotaKeepsItsUsage(t *testing.T) {
	objs := `apiVersion: v1
kind: Pod
metadata: {name: p3, namespace: apps}
spec: {containers: [{name: c, image: img}]}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: pods, namespace: apps}
spec: {hard: {pods: "2"}}
status: {hard: {pods: "2"}, used: {pods: "2"}}`
	r, err := Run(context.Background(), &Files{Objects: objects(t, objs)}, Options{AsCreate: true, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	text := string(writeAll(t, r)["text"])
	if !strings.Contains(text, "exceeded quota: pods") {
		t.Errorf("the CREATE of p3 was not refused by the quota's recorded usage:\n%s", text)
	}
}
