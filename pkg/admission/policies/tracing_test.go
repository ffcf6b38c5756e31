package policies_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/policies"
	"github.com/admitd/admitd/pkg/admission/trace"
	"sigs.k8s.io/yaml"
)

// A MutatingAdmissionPolicy's step in the trace shows what it changed, as
// a JSON patch and a field diff, like a webhook's; one that changed nothing
// shows none.
func TestMutatingPolicyStepShowsItsChange(t *testing.T) {
	c := readCase(t, "testdata/mapspec-117-reinvocation/case.yaml")
	store, snap := newObjectStore(), &policies.Snapshot{}
	for _, raw := range c.Objects {
		addObject(t, store, snap, raw, !c.NoDefaults)
	}
	o := policies.Options{Source: policies.StaticSource{Snapshot: snap}, Params: store, TypeConverters: widgetConverters}
	m, err := policies.NewMutating(o, admission.PluginContext{Namespaces: store, Schema: fakeSchema{}, Authorizer: denySecrets})
	if err != nil {
		t.Fatal(err)
	}
	a := c.Request.attributes(t)
	a.Record = admission.NewRecord()
	if err := admission.NewChain(admission.NamedPlugin{Name: policies.MutatingName, Plugin: m}).Admit(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	tr := trace.Capture(trace.Request{AuditID: "a", Operation: "CREATE", Resource: "configmaps", Time: time.Now()},
		trace.Outcome{Code: 201}, a.Record).Trace()
	var diffs []string
	for _, s := range tr.Steps {
		if s.Plugin != policies.MutatingName {
			continue
		}
		if s.Outcome != trace.OutcomeMutated {
			if len(s.Patch) != 0 {
				t.Errorf("step %s round %d (%s) shows a patch %s", s.Name, s.Round, s.Outcome, s.Patch)
			}
			continue
		}
		d, _ := json.Marshal(s.FieldDiff)
		diffs = append(diffs, s.Name+" "+string(s.Patch)+" "+string(d))
	}
	got := strings.Join(diffs, "\n")
	for _, want := range []string{
		`m1 [{"op":"add","path":"/metadata/labels/seen","value":"before-second"}]`,
		`m2 [{"op":"add","path":"/metadata/labels/second","value":"x"}]`,
		`m1 [{"op":"replace","path":"/metadata/labels/seen","value":"after-second"}] [{"op":"replace","field":"metadata.labels.seen","old":"before-second","new":"after-second"}]`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("mutating policy steps:\n%s\nlack %s", got, want)
		}
	}
}

// A validating policy runs once, after the mutating phase's last round: in
// a verbose trace of a request the mutating phase reinvoked, a validating
// policy out of the request's rules is a round-0 skip.
func TestValidatingSkipAfterReinvocationIsRoundZero(t *testing.T) {
	c := readCase(t, "testdata/mapspec-117-reinvocation/case.yaml")
	store, snap := newObjectStore(), &policies.Snapshot{}
	for _, raw := range c.Objects {
		addObject(t, store, snap, raw, !c.NoDefaults)
	}
	var vap map[string]any
	if err := yaml.Unmarshal([]byte(`{apiVersion: admissionregistration.k8s.io/v1, kind: ValidatingAdmissionPolicy,
  metadata: {name: secrets-only, resourceVersion: "1"},
  spec: {matchConstraints: {resourceRules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [secrets]}]},
    validations: [{expression: "true"}]}}`), &vap); err != nil {
		t.Fatal(err)
	}
	addObject(t, store, snap, vap, true)
	var binding map[string]any
	if err := yaml.Unmarshal([]byte(`{apiVersion: admissionregistration.k8s.io/v1, kind: ValidatingAdmissionPolicyBinding,
  metadata: {name: secrets-only}, spec: {policyName: secrets-only, validationActions: [Deny]}}`), &binding); err != nil {
		t.Fatal(err)
	}
	addObject(t, store, snap, binding, true)
	o := policies.Options{Source: policies.StaticSource{Snapshot: snap}, Params: store, TypeConverters: widgetConverters}
	pc := admission.PluginContext{Namespaces: store, Schema: fakeSchema{}, Authorizer: denySecrets}
	m, err := policies.NewMutating(o, pc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := policies.NewValidating(o, pc)
	if err != nil {
		t.Fatal(err)
	}
	chain := admission.NewChain(admission.NamedPlugin{Name: policies.MutatingName, Plugin: m},
		admission.NamedPlugin{Name: policies.ValidatingName, Plugin: v})
	a := c.Request.attributes(t)
	a.Record, a.DryRun = admission.NewRecord(), true
	a.Record.SetVerbose(true) // verbose traces are for dry runs
	if err := chain.Admit(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if err := chain.Validate(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	reinvoked, found := false, false
	for _, s := range a.Record.Steps() {
		if s.Plugin == policies.MutatingName && s.Round == 1 {
			reinvoked = true
		}
		if s.Plugin == policies.ValidatingName && s.Name == "secrets-only" {
			found = true
			if s.Skip == "" || s.Round != 0 {
				t.Errorf("validating step %+v: want a round-0 skip", s)
			}
		}
	}
	if !reinvoked || !found {
		t.Fatalf("reinvoked %v, validating policy traced %v: %+v", reinvoked, found, a.Record.Steps())
	}
}

// A failed validation denies a policy's step only through a binding whose
// actions include Deny: through Warn or Audit alone the step is admitted
// and carries the warning or the validation_failure annotation it gave
// the request.
func TestValidatingStepFollowsBindingActions(t *testing.T) {
	c := readCase(t, "testdata/mapspec-117-reinvocation/case.yaml")
	store, snap := newObjectStore(), &policies.Snapshot{}
	for _, raw := range c.Objects {
		addObject(t, store, snap, raw, !c.NoDefaults)
	}
	add := func(doc string) {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		addObject(t, store, snap, obj, true)
	}
	add(`{apiVersion: admissionregistration.k8s.io/v1, kind: ValidatingAdmissionPolicy,
  metadata: {name: no-cm, resourceVersion: "1"},
  spec: {matchConstraints: {resourceRules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]},
    validations: [{expression: "false", message: "no configmaps"}]}}`)
	actions := map[string]string{"deny": "[Deny]", "warn": "[Warn]", "audit": "[Audit]", "warn-audit": "[Warn, Audit]"}
	for name, list := range actions {
		add(`{apiVersion: admissionregistration.k8s.io/v1, kind: ValidatingAdmissionPolicyBinding,
  metadata: {name: ` + name + `}, spec: {policyName: no-cm, validationActions: ` + list + `}}`)
	}
	o := policies.Options{Source: policies.StaticSource{Snapshot: snap}, Params: store, TypeConverters: widgetConverters}
	v, err := policies.NewValidating(o, admission.PluginContext{Namespaces: store, Schema: fakeSchema{}, Authorizer: denySecrets})
	if err != nil {
		t.Fatal(err)
	}
	a := c.Request.attributes(t)
	a.Record = admission.NewRecord()
	if err := admission.NewChain(admission.NamedPlugin{Name: policies.ValidatingName, Plugin: v}).Validate(context.Background(), a); err == nil {
		t.Fatal("the Deny binding did not refuse the request")
	}
	tr := trace.Capture(trace.Request{AuditID: "a", Operation: "CREATE", Resource: "configmaps", Time: time.Now()},
		trace.Outcome{Code: 403}, a.Record).Trace()
	const warning = "Validation failed for ValidatingAdmissionPolicy 'no-cm' with binding 'warn': no configmaps"
	steps := map[string]trace.Step{}
	for _, s := range tr.Steps {
		steps[s.Configuration] = s
	}
	for name, want := range map[string]string{"deny": trace.OutcomeDenied, "warn": trace.OutcomeAdmitted,
		"audit": trace.OutcomeAdmitted, "warn-audit": trace.OutcomeAdmitted} {
		s, ok := steps[name]
		if !ok || s.Outcome != want {
			t.Errorf("binding %s: step %+v, want outcome %s", name, s, want)
		}
		warns := len(s.Warnings) > 0
		audited := strings.Contains(s.AuditAnnotations["validation.policy.admission.k8s.io/validation_failure"], `"binding":"`+name+`"`)
		if warns != strings.Contains(actions[name], "Warn") || audited != strings.Contains(actions[name], "Audit") {
			t.Errorf("binding %s (%s): warnings %q, annotations %v", name, actions[name], s.Warnings, s.AuditAnnotations)
		}
	}
	if w := steps["warn"].Warnings; len(w) != 1 || w[0] != warning {
		t.Errorf("warn step's warnings %q, want [%q]", w, warning)
	}
}
