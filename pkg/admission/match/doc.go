// Package match decides whether an admission request is in the scope of a
// webhook or an admission policy: rules (operations, groups, versions,
// resources and subresources with their wildcards, scope, resourceNames),
// namespaceSelector, objectSelector and matchPolicy Equivalent, with the
// exact semantics and error handling of upstream kube-apiserver 1.37. One
// implementation serves MutatingAdmissionWebhook, ValidatingAdmissionWebhook,
// ValidatingAdmissionPolicy and MutatingAdmissionPolicy.
//
// Configuration is compiled once per change: Webhook, Policy and Binding turn
// API objects into immutable Criteria, and NewIndex indexes a list of them by
// group and resource (and namespaceSelector) so that a request only visits
// the criteria that could match it. Per request, a Request carries the
// attributes, the equivalent resources and the namespace labels, read at
// most once (and shared with other plugins through the admission.Record).
// WebhookExemption and PolicyExemption say which resources hooks never see.
//
// It does not evaluate matchConditions: those are CEL, compiled elsewhere.
// A caller evaluates them after Match reports Matched, converting the object
// to Decision.Kind first. Nor does it decide what a failure means: a Decision
// with an error is handed back to the caller (for webhooks upstream returns
// it to the client as is; for policies the failurePolicy applies).
package match
