package registry

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// A Node's preparation, as upstream's node strategies: a create may set
// the status but not the removed configSource nor status.config; an
// update keeps a configSource only when stored; podPreemptionPolicy
// stays out while its gate is off (its 1.37 default) unless stored. The
// gates of the node's other optional status fields (runtime handlers,
// features, declared features, running in a user namespace) are on by
// default in 1.37, so those fields are kept.

func prepareNodeForCreate(obj runtime.Object) {
	n := obj.(*corev1.Node)
	n.Spec.ConfigSource = nil
	n.Status.Config = nil
	if !(defaultGates{}).Enabled(gatePodPreemptionPolicy) {
		n.Spec.PodPreemptionPolicy = nil
	}
}

func prepareNodeForUpdate(obj, old runtime.Object) {
	n, was := obj.(*corev1.Node), old.(*corev1.Node)
	if was.Spec.ConfigSource == nil {
		n.Spec.ConfigSource = nil
	}
	if was.Spec.PodPreemptionPolicy == nil && !(defaultGates{}).Enabled(gatePodPreemptionPolicy) {
		n.Spec.PodPreemptionPolicy = nil
	}
}

// prepareNodeForStatusUpdate: a status write keeps status.config only when
// one is stored.
func prepareNodeForStatusUpdate(subresource string, obj, old runtime.Object) {
	if subresource == "status" && old.(*corev1.Node).Status.Config == nil {
		obj.(*corev1.Node).Status.Config = nil
	}
}
