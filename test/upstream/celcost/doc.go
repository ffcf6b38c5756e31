// Package celcost holds a differential test of `admitd lint`'s AL030
// (CEL expressions over or near the estimated cost limit) against
// kube-apiserver 1.37.2's own cost estimation: the estimate and verdict of
// an expression over a custom resource against apiextensions-apiserver's
// compilation and validation of the same expression as a validation rule
// of the CRD (the one place upstream refuses an expression for its
// estimated cost), the findings over built-in kinds typed by admitd's
// generated OpenAPI against those typed by upstream's own definitions (the
// resolver kube-controller-manager's policy type checker uses), and that
// upstream's ValidatingAdmissionPolicy validation accepts every policy
// whatever its cost. It has no non-test code.
package celcost
