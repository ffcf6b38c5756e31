// Package flowcontrol compares admitd's API Priority and Fairness
// (internal/flowcontrol) with upstream's (k8s.io/apiserver/pkg/util/flowcontrol):
// classification of requests by FlowSchemas, the shuffle-sharding dealer
// that picks a flow's queues, and fair queuing: upstream's queueset and
// admitd's queue set (through flowcontrol.FairQueues) driven step by step
// on one fake clock, seating the same requests in the same order.
package flowcontrol
