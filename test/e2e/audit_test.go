package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// auditPolicies are the candidate policies: ConfigMaps in env=prod
// namespaces need a team label, Deployments at most 5 replicas, and
// ConfigMaps without an owner label get one.
const auditPolicies = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: require-team}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  validations:
  - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
    message: every ConfigMap needs a team label
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: require-team-prod}
spec:
  policyName: require-team
  validationActions: [Deny]
  matchResources: {namespaceSelector: {matchLabels: {env: prod}}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  validations:
  - expression: "object.spec.replicas <= 5"
    messageExpression: "'at most 5 replicas, not ' + string(object.spec.replicas)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas}
spec:
  policyName: max-replicas
  validationActions: [Deny]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: owner}
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
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
spec:
  policyName: owner
`

// auditWebhook is the candidate webhook: it denies Secrets labelled
// bad=true and stamps those labelled stamp=true.
func auditWebhook(hooks *webhookServer) string {
	return `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: secrets}
webhooks:
- name: secrets.example.com
  clientConfig: {url: "` + hooks.url + `/secrets", caBundle: "` + hooks.caBundle + `"}
  rules: [{operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [secrets]}]
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
`
}

func secretsHook(_ string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	var obj metav1.PartialObjectMetadata
	_ = json.Unmarshal(req.Object.Raw, &obj)
	switch {
	case obj.Labels["bad"] == "true":
		return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Code: 403, Message: "bad secret"}}
	case obj.Labels["stamp"] == "true":
		pt := admissionv1.PatchTypeJSONPatch
		return &admissionv1.AdmissionResponse{Allowed: true, PatchType: &pt,
			Patch: []byte(`[{"op":"add","path":"/metadata/annotations","value":{"stamped":"yes"}}]`)}
	}
	return &admissionv1.AdmissionResponse{Allowed: true}
}

// auditObjects are 3 namespaces with 14 objects each, some that the
// candidate configuration denies or changes.
func auditObjects() string {
	var b strings.Builder
	for _, ns := range []struct{ name, env string }{{"shop", "prod"}, {"lab", "dev"}, {"misc", "none"}} {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s, labels: {env: %s}}\n---\n", ns.name, ns.env)
		for i, labels := range []string{"{team: a}", "{}", "{team: b, owner: x}", "{owner: x}", "{app: web}"} {
			fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d, namespace: %s, labels: %s}\ndata: {k: v}\n---\n", i, ns.name, labels)
		}
		for i, labels := range []string{"{bad: \"true\"}", "{stamp: \"true\"}", "{}"} {
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Secret\nmetadata: {name: secret-%d, namespace: %s, labels: %s}\nstringData: {k: v}\n---\n", i, ns.name, labels)
		}
		for i, replicas := range []int{1, 10} {
			fmt.Fprintf(&b, `apiVersion: apps/v1
kind: Deployment
metadata: {name: deploy-%d, namespace: %s}
spec:
  replicas: %d
  selector: {matchLabels: {app: d%d}}
  template:
    metadata: {labels: {app: d%d}}
    spec: {containers: [{name: c, image: nginx}]}
---
`, i, ns.name, replicas, i, i)
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Service\nmetadata: {name: svc-%d, namespace: %s}\nspec: {ports: [{port: 80}]}\n---\n", i, ns.name)
			fmt.Fprintf(&b, "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa-%d, namespace: %s}\n---\n", i, ns.name)
		}
	}
	return b.String()
}

// auditReport is the part of admitd audit -o json the test reads.
type auditReport struct {
	Objects  int `json:"objects"`
	Policies []struct {
		Plugin  string         `json:"plugin"`
		Name    string         `json:"name"`
		Denied  []auditFinding `json:"denied"`
		Errors  []auditFinding `json:"errors"`
		Mutated []auditFinding `json:"mutated"`
	} `json:"policies"`
	NotEvaluated []auditFinding `json:"notEvaluated"`
}

type auditFinding struct {
	Object struct {
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"object"`
	Message string `json:"message"`
}

func (f auditFinding) key() string {
	return f.Object.Kind + " " + f.Object.Namespace + "/" + f.Object.Name
}

// TestAuditKubeconfigNamesWhatReapplyingWouldDenyOrChange audits a server's
// objects through a candidate VAP, MAP and webhook, then applies the
// configuration to the server and re-applies every object: the report must
// name exactly the objects those updates are denied for or change.
func TestAuditKubeconfigNamesWhatReapplyingWouldDenyOrChange(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	hooks := startWebhookServer(t, secretsHook)
	a.MustKubectl(t, auditObjects(), "apply", "-f", "-")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "policies.yaml"), auditPolicies)
	writeFile(t, filepath.Join(dir, "webhook.yaml"), auditWebhook(hooks))

	out, errOut, code := runOffline(t, "audit", "-f", dir, "--kubeconfig", a.Kubeconfig, "-o", "json")
	if code != 1 {
		t.Fatalf("admitd audit: exit %d, want 1 (denials)\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	var report auditReport
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("admitd audit -o json: %v\n%s", err, out)
	}
	if len(report.NotEvaluated) != 0 {
		t.Errorf("not evaluated: %+v", report.NotEvaluated)
	}
	reportDenied, reportChanged := reportSets(report)
	// in pages of 7 objects, the same
	out7, errOut, _ := runOffline(t, "audit", "-f", dir, "--kubeconfig", a.Kubeconfig, "-o", "json", "--chunk-size", "7")
	var report7 auditReport
	if err := json.Unmarshal([]byte(out7), &report7); err != nil {
		t.Fatalf("admitd audit --chunk-size 7: %v\n%s%s", err, out7, errOut)
	}
	if d, c := reportSets(report7); report7.Objects != report.Objects || !slices.Equal(d, reportDenied) || !slices.Equal(c, reportChanged) {
		t.Errorf("--chunk-size 7: %d objects, denied %v, changed %v; with 500: %d, %v, %v", report7.Objects, d, c, report.Objects, reportDenied, reportChanged)
	}

	refs := listAll(t, a)
	a.MustKubectl(t, "", "apply", "-f", dir)
	denied, changed := reapply(t, a, refs)

	if !slices.Equal(reportDenied, denied) {
		t.Errorf("the report denies\n  %v\nre-applying was denied for\n  %v", reportDenied, denied)
	}
	if !slices.Equal(reportChanged, changed) {
		t.Errorf("the report changes\n  %v\nre-applying changed\n  %v", reportChanged, changed)
	}
	for _, want := range []string{"ConfigMap shop/cm-1", "Deployment lab/deploy-1", "Secret misc/secret-0"} {
		if !slices.Contains(denied, want) {
			t.Errorf("re-applying was not denied for %s (the test's objects are not what it meant)", want)
		}
	}
	for _, want := range []string{"ConfigMap lab/cm-0", "Secret shop/secret-1"} {
		if !slices.Contains(changed, want) {
			t.Errorf("re-applying did not change %s (the test's objects are not what it meant)", want)
		}
	}
	t.Logf("%d objects audited, %d denied, %d changed", report.Objects, len(denied), len(changed))
}

// reportSets are the objects the report says would be denied (by a
// policy, or a webhook failing closed) and those it would change and not
// deny, sorted.
func reportSets(r auditReport) (denied, changed []string) {
	d, c := map[string]bool{}, map[string]bool{}
	for _, p := range r.Policies {
		for _, f := range append(p.Denied, p.Errors...) {
			d[f.key()] = true
		}
		for _, f := range p.Mutated {
			c[f.key()] = true
		}
	}
	for k := range d {
		denied = append(denied, k)
	}
	for k := range c {
		if !d[k] {
			changed = append(changed, k)
		}
	}
	slices.Sort(denied)
	slices.Sort(changed)
	return denied, changed
}

// auditRef is an object to re-apply.
type auditRef struct {
	gvr             schema.GroupVersionResource
	kind, ns, name  string
	namespacedScope bool
}

// listAll lists every object of every listable resource but admission
// configurations and APIServices, as admitd audit does.
func listAll(t *testing.T, a *admitd) []auditRef {
	t.Helper()
	cfg := a.RestConfig(t)
	disc := discovery.NewDiscoveryClientForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	lists, err := discovery.ServerPreferredResources(disc)
	if err != nil {
		t.Fatal(err)
	}
	var refs []auditRef
	for _, l := range lists {
		gv, _ := schema.ParseGroupVersion(l.GroupVersion)
		if gv.Group == "admissionregistration.k8s.io" || gv.Group == "apiregistration.k8s.io" {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "update") {
				continue
			}
			items, err := dyn.Resource(gv.WithResource(r.Name)).List(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatalf("listing %s: %v", r.Name, err)
			}
			for _, it := range items.Items {
				refs = append(refs, auditRef{gvr: gv.WithResource(r.Name), kind: r.Kind, ns: it.GetNamespace(), name: it.GetName(), namespacedScope: r.Namespaced})
			}
		}
	}
	return refs
}

// reapply updates every object unchanged through the server and returns
// those the update was refused for and those it changed, sorted.
func reapply(t *testing.T, a *admitd, refs []auditRef) (denied, changed []string) {
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(a.RestConfig(t))
	for _, r := range refs {
		ri := dynamic.ResourceInterface(dyn.Resource(r.gvr))
		if r.namespacedScope {
			ri = dyn.Resource(r.gvr).Namespace(r.ns)
		}
		key := r.kind + " " + r.ns + "/" + r.name
		before, after, err := updateUnchanged(t, ri, r.name)
		switch {
		case apierrors.IsNotFound(err):
			continue // gone since the listing (an Event, a Lease)
		case err != nil:
			denied = append(denied, key)
		case !reflect.DeepEqual(comparable(before), comparable(after)):
			changed = append(changed, key)
		}
	}
	slices.Sort(denied)
	slices.Sort(changed)
	return denied, changed
}

func updateUnchanged(t *testing.T, ri dynamic.ResourceInterface, name string) (before, after *unstructured.Unstructured, err error) {
	for try := 0; try < 5; try++ {
		if before, err = ri.Get(t.Context(), name, metav1.GetOptions{}); err != nil {
			return nil, nil, err
		}
		after, err = ri.Update(t.Context(), before.DeepCopy(), metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) {
			return before, after, err
		}
	}
	return before, after, err
}

// comparable is the object without what any write changes.
func comparable(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata", "resourceVersion")
	unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
	unstructured.RemoveNestedField(c.Object, "metadata", "generation")
	return c.Object
}

// TestAuditPolicyReports checks -o policyreport on files: a PolicyReport per
// namespace (no cluster-scoped object matches, so no ClusterPolicyReport),
// its fail results exactly the denials, summaries that count the results.
func TestAuditPolicyReports(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "policies.yaml"), auditPolicies)
	writeFile(t, filepath.Join(dir, "objects.yaml"), strings.ReplaceAll(auditObjects(), "stringData: {k: v}", "data: {k: dg==}"))
	out, errOut, code := runOffline(t, "audit", "-f", filepath.Join(dir, "policies.yaml"), "--objects", filepath.Join(dir, "objects.yaml"),
		"-o", "policyreport", "--fail-on", "none")
	if code != 0 {
		t.Fatalf("admitd audit: exit %d, want 0 (--fail-on none)\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	fails := map[string]int{}
	for _, doc := range strings.Split(out, "\n---\n") {
		var rep struct {
			APIVersion string         `json:"apiVersion"`
			Kind       string         `json:"kind"`
			Metadata   map[string]any `json:"metadata"`
			Summary    map[string]int `json:"summary"`
			Results    []struct {
				Policy, Rule, Result string
				Resources            []map[string]any
			} `json:"results"`
		}
		if err := yaml.Unmarshal([]byte(doc), &rep); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		if rep.APIVersion != "wgpolicyk8s.io/v1alpha2" || rep.Kind != "PolicyReport" {
			t.Errorf("a report of %s %s, want wgpolicyk8s.io/v1alpha2 PolicyReport", rep.APIVersion, rep.Kind)
		}
		counts := map[string]int{}
		for _, r := range rep.Results {
			counts[r.Result]++
			if r.Result == "fail" {
				fails[fmt.Sprint(rep.Metadata["namespace"], " ", r.Policy, "/", r.Rule, " ", r.Resources[0]["name"])]++
			}
		}
		for _, res := range []string{"pass", "fail", "warn", "error"} {
			if rep.Summary[res] != counts[res] {
				t.Errorf("%v: summary %s = %d, results %d", rep.Metadata, res, rep.Summary[res], counts[res])
			}
		}
	}
	want := map[string]int{"shop require-team/require-team-prod cm-1": 1, "shop require-team/require-team-prod cm-3": 1,
		"shop require-team/require-team-prod cm-4": 1, "shop max-replicas/max-replicas deploy-1": 1,
		"lab max-replicas/max-replicas deploy-1": 1, "misc max-replicas/max-replicas deploy-1": 1}
	if !reflect.DeepEqual(fails, want) {
		t.Errorf("fail results %v, want %v", fails, want)
	}
}

func TestAuditExitStatus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	policies, objects, mutatedOnly := filepath.Join(dir, "policies.yaml"), filepath.Join(dir, "objects.yaml"), filepath.Join(dir, "mutated.yaml")
	writeFile(t, policies, auditPolicies)
	writeFile(t, objects, auditObjects())
	writeFile(t, mutatedOnly, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: lab, labels: {team: a}}\n")
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"denials", []string{"-f", policies, "--objects", objects}, 1, "denied     ConfigMap shop/cm-1: every ConfigMap needs a team label"},
		{"denials, --fail-on none", []string{"-f", policies, "--objects", objects, "--fail-on", "none"}, 0, "at most 5 replicas, not 10"},
		{"a mutation only", []string{"-f", policies, "--objects", mutatedOnly}, 0, "mutated    ConfigMap lab/c"},
		{"a mutation only, --fail-on mutate", []string{"-f", policies, "--objects", mutatedOnly, "--fail-on", "mutate"}, 1, "--fail-on=mutate"},
		{"no configuration", []string{"--objects", objects}, 2, "a candidate configuration is required"},
		{"no objects", []string{"-f", policies}, 2, "--objects FILE_OR_DIR or --kubeconfig FILE"},
		{"both sources", []string{"-f", policies, "--objects", objects, "--kubeconfig", "kc"}, 2, "exclude each other"},
		{"bad output", []string{"-f", policies, "--objects", objects, "-o", "xml"}, 2, "--output must be one of"},
		{"bad fail-on", []string{"-f", policies, "--objects", objects, "--fail-on", "error"}, 2, "--fail-on must be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runOffline(t, append([]string{"audit"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("admitd audit: exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
			if !strings.Contains(out+errOut, tc.out) {
				t.Errorf("admitd audit: output lacks %q\nstdout: %s\nstderr: %s", tc.out, out, errOut)
			}
		})
	}
}

// namespacePolicy warns about namespaces without an env label, for a
// ClusterPolicyReport.
const namespacePolicy = `---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: env-label}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [namespaces]}
  validations:
  - {expression: "has(object.metadata.labels) && 'env' in object.metadata.labels", message: namespaces need an env label}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: env-label}
spec:
  policyName: env-label
  validationActions: [Warn]
`

// TestAuditPolicyReportsValidateAgainstTheCRD creates the PolicyReports and
// the ClusterPolicyReport of an audit in a server that has wg-policy's
// CRDs, with strict field validation: every field must be in the schema,
// of its type and in its enum.
func TestAuditPolicyReportsValidateAgainstTheCRD(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "policies.yaml"), auditPolicies+namespacePolicy)
	objects := auditObjects() + "apiVersion: v1\nkind: Namespace\nmetadata: {name: unlabelled}\n"
	writeFile(t, filepath.Join(dir, "objects.yaml"), objects)
	reports, errOut, code := runOffline(t, "audit", "-f", filepath.Join(dir, "policies.yaml"), "--objects", filepath.Join(dir, "objects.yaml"),
		"-o", "policyreport", "--fail-on", "none")
	if code != 0 {
		t.Fatalf("admitd audit: exit %d\n%s%s", code, reports, errOut)
	}
	if !strings.Contains(reports, "kind: ClusterPolicyReport") {
		t.Fatalf("no ClusterPolicyReport:\n%s", reports)
	}
	a := startAdmitd(t, t.TempDir())
	a.MustKubectl(t, "", "apply", "-f", "testdata/wgpolicy-crds.yaml")
	a.MustKubectl(t, "", "wait", "--for=condition=Established", "crd/policyreports.wgpolicyk8s.io", "crd/clusterpolicyreports.wgpolicyk8s.io")
	var namespaces strings.Builder
	for _, ns := range []string{"shop", "lab", "misc"} {
		fmt.Fprintf(&namespaces, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\n", ns)
	}
	a.MustKubectl(t, namespaces.String(), "apply", "-f", "-")
	out := a.MustKubectl(t, reports, "create", "--validate=strict", "-f", "-")
	if n := strings.Count(out, "created"); n != 4 {
		t.Errorf("kubectl create: %d reports created, want 4 (3 namespaces and the cluster):\n%s", n, out)
	}
	// the schema is enforced: a result outside the enum is refused
	bad := strings.Replace(reports, "result: fail", "result: failed", 1)
	bad = strings.ReplaceAll(bad, "name: admitd-audit", "name: admitd-audit-bad")
	if _, errOut, err := a.Kubectl(t, bad, "create", "--validate=strict", "-f", "-"); err == nil || !strings.Contains(errOut, "Unsupported value") {
		t.Errorf("a report with result \"failed\": err %v, stderr %s; want Unsupported value", err, errOut)
	}
	// and a field outside it too
	bad = strings.Replace(reports, "  scored: true", "  scored: true\n  bogus: x", 1)
	bad = strings.ReplaceAll(bad, "name: admitd-audit", "name: admitd-audit-bogus")
	if _, errOut, err := a.Kubectl(t, bad, "create", "--validate=strict", "-f", "-"); err == nil || !strings.Contains(errOut, `unknown field "results[0].bogus"`) {
		t.Errorf("a report with an unknown field: err %v, stderr %s; want unknown field", err, errOut)
	}
}
