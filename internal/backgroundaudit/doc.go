// Package backgroundaudit is the background audit of `admitd serve
// --background-audit`: the validations of ValidatingAdmissionPolicies
// whose bindings include the Audit action, evaluated against the objects
// already stored, as the UPDATE that re-applies each object unchanged.
// It reuses the ValidatingAdmissionPolicy plugin of pkg/admission/policies
// (an instance of its own, fed a snapshot that holds only the Audit
// bindings, their actions narrowed to Audit), so the semantics are the
// admission chain's: matchConstraints, binding matchResources, params,
// matchConditions, variables, messageExpression.
//
// A Scanner reads storage page by page (never a whole resource at once),
// one object at a time on one goroutine with a pause between objects, and
// scans again when a policy, binding or param changes, or when its
// interval has elapsed. Between scans it follows the changes to the
// resources it scanned (a watch from the revision it read each at),
// evaluating each changed object again in its ledger. It never writes
// the objects it scans. Its results
// are served to the dashboard (Results) and, when the wgpolicyk8s.io
// PolicyReport CRD is installed, written as PolicyReports and a
// ClusterPolicyReport (a Publisher).
//
// It is not `admitd audit` (a candidate configuration against a cluster's
// or files' objects, through an in-process server): this scans the
// configuration in force against the objects of this server.
package backgroundaudit
