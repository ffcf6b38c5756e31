package printers

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var webhookColumns = []metav1.TableColumnDefinition{
	nameColumn,
	integer("Webhooks", "Webhooks indicates the number of webhooks registered in this configuration"),
	ageColumn,
}

var mutatingWebhookPrinter = kind(webhookColumns, func(c *admissionregistrationv1.MutatingWebhookConfiguration, now time.Time) []any {
	return []any{c.Name, int64(len(c.Webhooks)), since(c.CreationTimestamp, now)}
})

var validatingWebhookPrinter = kind(webhookColumns, func(c *admissionregistrationv1.ValidatingWebhookConfiguration, now time.Time) []any {
	return []any{c.Name, int64(len(c.Webhooks)), since(c.CreationTimestamp, now)}
})

var paramKindColumn = str("ParamKind", "ParamKind specifies the kind of resources used to parameterize this policy")

var validatingPolicyPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	integer("Validations", "Validations indicates the number of validation rules defined in this configuration"),
	paramKindColumn,
	ageColumn,
}, func(p *admissionregistrationv1.ValidatingAdmissionPolicy, now time.Time) []any {
	return []any{p.Name, int64(len(p.Spec.Validations)), paramKind(p.Spec.ParamKind), since(p.CreationTimestamp, now)}
})

var mutatingPolicyPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	integer("Mutations", "Mutation indicates the number of mutations rules defined in this configuration"),
	paramKindColumn,
	ageColumn,
}, func(p *admissionregistrationv1.MutatingAdmissionPolicy, now time.Time) []any {
	return []any{p.Name, int64(len(p.Spec.Mutations)), paramKind(p.Spec.ParamKind), since(p.CreationTimestamp, now)}
})

// paramKind is "<apiVersion>/<kind>", or "<unset>" for a policy without
// parameters.
func paramKind(k *admissionregistrationv1.ParamKind) string {
	if k == nil {
		return "<unset>"
	}
	return k.APIVersion + "/" + k.Kind
}

var policyBindingColumns = []metav1.TableColumnDefinition{
	nameColumn,
	str("PolicyName", "PolicyName indicates the policy definition which the policy binding binded to"),
	str("ParamRef", "ParamRef indicates the param resource which sets the configuration param"),
	ageColumn,
}

var validatingPolicyBindingPrinter = kind(policyBindingColumns, func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, now time.Time) []any {
	return []any{b.Name, b.Spec.PolicyName, paramRef(b.Spec.ParamRef), since(b.CreationTimestamp, now)}
})

var mutatingPolicyBindingPrinter = kind(policyBindingColumns, func(b *admissionregistrationv1.MutatingAdmissionPolicyBinding, now time.Time) []any {
	return []any{b.Name, b.Spec.PolicyName, paramRef(b.Spec.ParamRef), since(b.CreationTimestamp, now)}
})

// paramRef is "<namespace>/<name>" ("*/<name>" without a namespace), the
// selector, or "<unset>".
func paramRef(r *admissionregistrationv1.ParamRef) string {
	switch {
	case r == nil:
		return "<unset>"
	case r.Name != "" && r.Namespace != "":
		return r.Namespace + "/" + r.Name
	case r.Name != "":
		return "*/" + r.Name
	case r.Selector != nil:
		return r.Selector.String()
	}
	return "<unset>"
}
