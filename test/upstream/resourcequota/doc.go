// Package resourcequota holds a differential test of admitd's quota
// evaluators (pkg/quota) and ResourceQuota admission plugin against
// upstream's (k8s.io/kubernetes v1.37.2 pkg/quota/v1/evaluator/core, and
// k8s.io/apiserver's generic evaluators and resourcequota admission
// plugin over a fake clientset's informer and client): generated pods,
// services, claims, resource claims, config maps and custom resources with
// quotas of every scope go through both, which must agree on the decision,
// status code and message, on the quotas' status.used afterwards, and on
// each evaluator's usage, matching and summed usage figures. It has no
// non-test code.
package resourcequota
