// Package admissionregistration is the API defaulting and validation of the
// admissionregistration.k8s.io/v1 kinds: webhook configurations, validating
// and mutating admission policies and their bindings. The API server applies
// them to every write of these kinds; admission plugins and tests apply the
// same rules to configurations that do not come through the API (static
// manifests, test fixtures).
//
// Validation here covers what is specific to each kind; object metadata
// (name, namespace, labels) is checked by the caller, as the server's
// catalogue does for every kind.
package admissionregistration
