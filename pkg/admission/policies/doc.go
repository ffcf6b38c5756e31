// Package policies implements the ValidatingAdmissionPolicy and
// MutatingAdmissionPolicy admission plugins of Kubernetes 1.37: binding a
// policy to requests (matchConstraints, binding matchResources), resolving
// params (paramKind, paramRef by name or selector, parameterNotFoundAction),
// evaluating CEL (variables, matchConditions, validations with messages and
// reasons, auditAnnotations, ApplyConfiguration and JSONPatch mutations)
// and turning the outcome into exactly the response, warnings, audit
// annotations and metrics upstream produces. The behavioural reference is
// upstream's k8s.io/apiserver v0.37.2 plugin/policy packages; this is an
// independent implementation on admitd's match and cel packages.
//
// Policies, bindings and params come from the server: a Source gives an
// immutable Snapshot of the stored policies and bindings, and a ParamSource
// reads param objects when a request needs them. Static manifests (a
// staticManifestsDir in the plugin's AdmissionConfiguration section) are
// loaded here and evaluated before the API's. Compiled CEL is cached per
// policy and reused while the policy's resourceVersion does not change;
// matching reads a per-snapshot index, so policies that cannot match a
// request cost nothing. TypeChecker computes status.typeChecking; writing
// it back is the server's job.
//
// It does not validate policies at write time (the registry does) and never
// reads storage itself.
package policies
