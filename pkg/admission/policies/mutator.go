package policies

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/admitd/admitd/pkg/admission"
	admcel "github.com/admitd/admitd/pkg/admission/cel"
)

// mutator is the compiled form of a MutatingAdmissionPolicy.
type mutator struct {
	comp       *admcel.Composition
	conditions *admcel.MatchConditions // nil without matchConditions
	// patchers has one entry per mutation whose payload matches its
	// patchType; API validation makes that every mutation.
	patchers  []patcher
	mutations int
	ifNeeded  bool
	mc        conditionMetrics
}

// withMetrics has m record its matchConditions in am under name.
func (m *mutator) withMetrics(am *admission.Metrics, name string) *mutator {
	m.mc = conditionMetrics{m: am, name: name}
	return m
}

// compileMutator compiles a policy as upstream does: variables, then
// matchConditions, then each mutation with the patch types declared.
func compileMutator(c *admcel.Compiler, schema admission.Schema, p *admissionregistrationv1.MutatingAdmissionPolicy) *mutator {
	spec := &p.Spec
	opts := admcel.CompileOptions{HasParams: spec.ParamKind != nil, HasAuthorizer: true}
	m := &mutator{mutations: len(spec.Mutations),
		ifNeeded: spec.ReinvocationPolicy == admissionregistrationv1.IfNeededReinvocationPolicy}
	m.comp = c.Compose(variables(spec.Variables), opts)
	if len(spec.MatchConditions) > 0 {
		m.conditions = m.comp.CompileMatchConditions(spec.MatchConditions, opts, spec.FailurePolicy)
	}
	patchOpts := opts
	patchOpts.HasPatchTypes = true
	for _, mu := range spec.Mutations {
		switch {
		case mu.PatchType == admissionregistrationv1.PatchTypeJSONPatch && mu.JSONPatch != nil:
			patchOpts.ResultTypes = jsonPatchTypes
			m.patchers = append(m.patchers, &jsonPatcher{comp: m.comp, schema: schema,
				prog: m.comp.Compile(mu.JSONPatch.Expression, patchOpts)})
		case mu.PatchType == admissionregistrationv1.PatchTypeApplyConfiguration && mu.ApplyConfiguration != nil:
			patchOpts.ResultTypes = applyConfigurationTypes
			m.patchers = append(m.patchers, &applyPatcher{comp: m.comp,
				prog: m.comp.Compile(mu.ApplyConfiguration.Expression, patchOpts)})
		}
	}
	return m
}
