// Package cel is the Kubernetes CEL environment of admission: the variables
// admission expressions see (object, oldObject, request, namespaceObject,
// params, authorizer), the Kubernetes function libraries and cost limits of
// the upstream base environment, a compiler with a compile cache, and the
// evaluation of compiled expressions under a shared cost budget.
//
// Webhook matchConditions use it through MatchConditions; the admission
// policies (ValidatingAdmissionPolicy, MutatingAdmissionPolicy) use a
// Composition, which adds a policy's variables (compiled in order, computed
// lazily once per activation, their cost charged to the first expression
// that reads them), and NewCachingAuthorizer for the authorizer checks of a
// request.
//
// It is not a general CEL toolkit and does not decide what a policy or a
// webhook does with a result beyond the matchConditions rules; it does not
// validate expressions at write time (Compile with NewExpressions gives the
// environment for that). It follows kube-apiserver 1.37 (k8s.io/apiserver
// v0.37.2 plugin/cel and webhook/matchconditions) behaviour and messages.
package cel
