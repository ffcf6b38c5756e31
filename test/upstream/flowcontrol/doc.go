// Package flowcontrol compares admitd's API Priority and Fairness
// (internal/flowcontrol) with upstream's (k8s.io/apiserver/pkg/util/flowcontrol):
// classification of requests by FlowSchemas, and the shuffle-sharding
// dealer that picks a flow's queues.
package flowcontrol
