package server

import (
	"context"
	"fmt"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/apiserver"
)

// systemCriticalPriority is the priority of system-cluster-critical;
// system-node-critical is 1000 above it.
const systemCriticalPriority = 2000000000

// systemPriorityClasses are the PriorityClasses kube-apiserver creates at
// start (its scheduling post-start hook), as it defines them.
func systemPriorityClasses() []runtime.Object {
	class := func(name string, value int32, description string) runtime.Object {
		return &schedulingv1.PriorityClass{
			TypeMeta:   metav1.TypeMeta{APIVersion: schedulingv1.SchemeGroupVersion.String(), Kind: "PriorityClass"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Value:      value, Description: description,
		}
	}
	return []runtime.Object{
		class("system-node-critical", systemCriticalPriority+1000, "Used for system critical pods that must not be moved from their current node."),
		class("system-cluster-critical", systemCriticalPriority, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
	}
}

// ensureSystemPriorityClasses creates the system PriorityClasses that do
// not exist; like upstream, it leaves existing ones as they are.
func ensureSystemPriorityClasses(ctx context.Context, api *apiserver.Server) error {
	if err := api.EnsureObjects(ctx, apiserver.KubeAPIServerManager, nil, systemPriorityClasses()...); err != nil {
		return fmt.Errorf("system priority classes: %w", err)
	}
	return nil
}
