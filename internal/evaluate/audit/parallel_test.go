package audit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/internal/evaluate"
)

// mixedConfig reads params by name (a ConfigMap of the configuration,
// which an object of the same name replaces only for its own evaluation)
// and by selector (every ConfigMap of a namespace so labelled: one of the
// objects, which seeds the evaluation, and no object evaluated beside it
// may see it replaced), mutates ConfigMaps and has two webhooks answered
// from recorded responses.
const mixedConfig = `apiVersion: v1
kind: Namespace
metadata: {name: params}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: limits, namespace: params}
data: {maxReplicas: "5"}
---
apiVersion: admissionregistration.k8s.io/v1
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
kind: ValidatingAdmissionPolicy
metadata: {name: named-services}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [services]}]
  validations:
  - expression: "object.spec.ports.all(p, has(p.name))"
    message: ports need names
  auditAnnotations:
  - {key: ip, valueExpression: "has(object.spec.clusterIP) ? string(object.spec.clusterIP) : 'none'"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: named-services}
spec: {policyName: named-services, validationActions: [Deny, Audit]}
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
spec: {policyName: owner}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: hooks}
webhooks:
- name: secrets.example.com
  clientConfig: {url: "https://secrets.invalid/"}
  rules: [{operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [secrets]}]
  sideEffects: None
  admissionReviewVersions: [v1]
  objectSelector: {matchLabels: {sensitive: "true"}}
- name: pods.example.com
  clientConfig: {url: "https://pods.invalid/"}
  rules: [{operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  sideEffects: None
  admissionReviewVersions: [v1]
  namespaceSelector: {matchLabels: {env: prod}}`

const mixedResponses = `apiVersion: eval.admitd.io/v1alpha1
kind: WebhookResponses
webhooks:
  secrets.example.com: {allowed: false, status: {code: 403, message: no sensitive secrets}}
  pods.example.com: {allowed: true, warnings: [prod pods are watched], auditAnnotations: {seen: "yes"}}`

// mixedObjects are objects of many kinds in files: independent ones
// (ConfigMaps, Pods, Deployments, Services sharing cluster IPs) between
// ones evaluated alone (namespaces, LimitRanges, Secrets, the params,
// among them a namesake of the configuration's param), duplicates, an
// object without a name and an admission configuration.
func mixedObjects(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var docs []string
	docs = append(docs, "apiVersion: v1\nkind: Namespace\nmetadata: {name: prod, labels: {env: prod}}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: dev, labels: {env: dev}}")
	for i := range 120 {
		ns := []string{"prod", "dev", "other"}[i/6%3]
		labels := fmt.Sprintf("{team: t%d}", i%4)
		if i%5 == 0 {
			labels = "{}"
		}
		switch i % 6 {
		case 0:
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d, namespace: %s, labels: %s}\ndata: {k: v%d}", i, ns, labels, i))
		case 1:
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: pod-%d, namespace: %s, labels: %s}\nspec: {containers: [{name: c, image: img:%d}]}", i, ns, labels, i))
		case 2:
			docs = append(docs, fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: dep-%d, namespace: %s, labels: %s}\nspec: {replicas: %d, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: img}]}}}", i, ns, labels, i%8))
		case 3:
			name := ""
			if i%4 == 3 {
				name = ", name: http"
			}
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: svc-%d, namespace: %s}\nspec: {clusterIP: 10.0.0.%d, ports: [{port: 80%s}]}", i, ns, 100+i%3, name))
		case 4:
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: s-%d, namespace: %s, labels: {sensitive: \"%v\"}}\ndata: {k: dg==}", i, ns, i%8 == 4))
		case 5:
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: pod-%d, namespace: %s, labels: {team: t%d}}\nspec: {containers: [{name: c, image: img}]}", i-4, ns, i%3))
		}
		switch i {
		case 40:
			docs = append(docs, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: limits, namespace: params}\ndata: {maxReplicas: \"2\"}")
		case 50:
			docs = append(docs, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: retired, namespace: prod, labels: {retired-teams: \"true\"}}\ndata: {t1: \"\"}")
		case 60:
			docs = append(docs, "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr, namespace: dev}\nspec: {limits: [{type: Container, default: {cpu: 100m}}]}",
				"apiVersion: v1\nkind: Namespace\nmetadata: {name: late, labels: {env: prod}}")
		case 70:
			docs = append(docs, "apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: dev}\ndata: {no: name}",
				"apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: theirs}\nspec: {validations: [{expression: 'true'}]}")
		}
	}
	for i := 0; i < len(docs); i += 25 {
		file := filepath.Join(dir, fmt.Sprintf("objects-%03d.yaml", i))
		if err := os.WriteFile(file, []byte(strings.Join(docs[i:min(i+25, len(docs))], "\n---\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// writeAll is the report in every format, the PolicyReports at a fixed
// time.
func writeAll(t *testing.T, r *Report) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, format := range Formats {
		var b bytes.Buffer
		if format == "policyreport" {
			for _, rep := range policyReports(r, time.Unix(1e9, 0)) {
				y, err := yaml.Marshal(rep)
				if err != nil {
					t.Fatal(err)
				}
				b.Write(y)
			}
		} else if err := Write(&b, r, format); err != nil {
			t.Fatal(err)
		}
		out[format] = b.Bytes()
	}
	return out
}

// TestParallelReportIsTheSequentialOne: the report of 4 workers is the
// report of one, byte for byte in every format, as UPDATEs and as CREATEs.
func TestParallelReportIsTheSequentialOne(t *testing.T) {
	dir := mixedObjects(t)
	config := objects(t, mixedConfig)
	responses, err := evaluate.ParseResponses([]byte(mixedResponses))
	if err != nil {
		t.Fatal(err)
	}
	for _, asCreate := range []bool{false, true} {
		reports := map[int]map[string][]byte{}
		for _, workers := range []int{1, 4} {
			src, err := LoadFiles(dir)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Run(context.Background(), src, Options{Config: config, Responses: responses, AsCreate: asCreate, Workers: workers})
			if err != nil {
				t.Fatal(err)
			}
			reports[workers] = writeAll(t, r)
		}
		text := string(reports[1]["text"])
		if strings.Contains(text, "at most 2 replicas") {
			t.Errorf("as create %v: the namesake of the configuration's param was seen by other objects:\n%s", asCreate, text)
		}
		for _, want := range []string{"at most 5 replicas", "the team is retired", "no sensitive secrets",
			"mutated    ConfigMap", "ConfigMap dev/: no metadata.name", "admissionregistration.k8s.io: admission configurations"} {
			if !asCreate && !strings.Contains(text, want) {
				t.Errorf("as create %v: the sequential report has no %q:\n%s", asCreate, want, text)
			}
		}
		for _, format := range Formats {
			if !bytes.Equal(reports[1][format], reports[4][format]) {
				t.Errorf("as create %v: -o %s of 4 workers differs from one worker's:\n%s\n--- one worker:\n%s", asCreate, format, reports[4][format], reports[1][format])
			}
		}
	}
}
