package replicaset

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/admitd/admitd/internal/controllers"
)

// Kind is what a controller keeps replicas of: ReplicaSets, or
// ReplicationControllers, which it handles as ReplicaSets converted on
// the way in and out (as upstream's replication manager wraps its
// ReplicaSet controller).
type Kind struct {
	// Name is the controller's --controllers name, Component the source of
	// its events, User who its requests run as (kube-controller-manager's
	// service account for it).
	Name, Component string
	User            authenticationv1.UserInfo

	gvk schema.GroupVersionKind
	gvr schema.GroupVersionResource
	// terminatingReplicas: status.terminatingReplicas is kept (ReplicaSets
	// have it, ReplicationControllers do not).
	terminatingReplicas bool

	toReplicaSet func(obj runtime.Object) *appsv1.ReplicaSet
	get          func(ctx context.Context, c kubernetes.Interface, namespace, name string) (*appsv1.ReplicaSet, error)
	updateStatus func(ctx context.Context, c kubernetes.Interface, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error)
	// eventObject is the object events are about (the
	// ReplicationController an RC was converted from).
	eventObject func(rs *appsv1.ReplicaSet) runtime.Object
}

// ReplicaSets is kube-controller-manager's replicaset-controller.
var ReplicaSets = Kind{
	Name: controllers.ReplicaSetControllerName, Component: "replicaset-controller",
	User: controllers.ControllerUser("replicaset-controller"),
	gvk:  appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), gvr: appsv1.SchemeGroupVersion.WithResource("replicasets"),
	terminatingReplicas: true,
	toReplicaSet:        func(obj runtime.Object) *appsv1.ReplicaSet { return obj.(*appsv1.ReplicaSet) },
	get: func(ctx context.Context, c kubernetes.Interface, ns, name string) (*appsv1.ReplicaSet, error) {
		return c.AppsV1().ReplicaSets(ns).Get(ctx, name, metav1.GetOptions{})
	},
	updateStatus: func(ctx context.Context, c kubernetes.Interface, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
		return c.AppsV1().ReplicaSets(rs.Namespace).UpdateStatus(ctx, rs, metav1.UpdateOptions{})
	},
	eventObject: func(rs *appsv1.ReplicaSet) runtime.Object { return rs },
}

// ReplicationControllers is kube-controller-manager's
// replicationcontroller-controller.
var ReplicationControllers = Kind{
	Name: controllers.ReplicationControllerControllerName, Component: "replication-controller",
	User: controllers.ControllerUser("replication-controller"),
	gvk:  corev1.SchemeGroupVersion.WithKind("ReplicationController"), gvr: corev1.SchemeGroupVersion.WithResource("replicationcontrollers"),
	toReplicaSet: func(obj runtime.Object) *appsv1.ReplicaSet { return rcToRS(obj.(*corev1.ReplicationController)) },
	get: func(ctx context.Context, c kubernetes.Interface, ns, name string) (*appsv1.ReplicaSet, error) {
		rc, err := c.CoreV1().ReplicationControllers(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return rcToRS(rc), nil
	},
	updateStatus: func(ctx context.Context, c kubernetes.Interface, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
		rc, err := c.CoreV1().ReplicationControllers(rs.Namespace).UpdateStatus(ctx, rsToRC(rs), metav1.UpdateOptions{})
		if err != nil {
			return nil, err
		}
		return rcToRS(rc), nil
	},
	eventObject: func(rs *appsv1.ReplicaSet) runtime.Object { return rsToRC(rs) },
}

// rcToRS is a ReplicationController as the ReplicaSet it stands for: its
// selector as matchLabels.
func rcToRS(rc *corev1.ReplicationController) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{ObjectMeta: *rc.ObjectMeta.DeepCopy(), Spec: appsv1.ReplicaSetSpec{
		Replicas: rc.Spec.Replicas, MinReadySeconds: rc.Spec.MinReadySeconds,
		Selector: &metav1.LabelSelector{MatchLabels: rc.Spec.Selector},
	}, Status: appsv1.ReplicaSetStatus{
		Replicas: rc.Status.Replicas, FullyLabeledReplicas: rc.Status.FullyLabeledReplicas,
		ReadyReplicas: rc.Status.ReadyReplicas, AvailableReplicas: rc.Status.AvailableReplicas,
		ObservedGeneration: rc.Status.ObservedGeneration,
	}}
	if rc.Spec.Template != nil {
		rs.Spec.Template = *rc.Spec.Template.DeepCopy()
	}
	for _, c := range rc.Status.Conditions {
		rs.Status.Conditions = append(rs.Status.Conditions, appsv1.ReplicaSetCondition{
			Type: appsv1.ReplicaSetConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message})
	}
	return rs
}

// rsToRC is the ReplicationController a converted ReplicaSet stands for.
func rsToRC(rs *appsv1.ReplicaSet) *corev1.ReplicationController {
	rc := &corev1.ReplicationController{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ReplicationController"},
		ObjectMeta: *rs.ObjectMeta.DeepCopy(),
		Spec: corev1.ReplicationControllerSpec{Replicas: rs.Spec.Replicas, MinReadySeconds: rs.Spec.MinReadySeconds,
			Template: rs.Spec.Template.DeepCopy()},
		Status: corev1.ReplicationControllerStatus{
			Replicas: rs.Status.Replicas, FullyLabeledReplicas: rs.Status.FullyLabeledReplicas,
			ReadyReplicas: rs.Status.ReadyReplicas, AvailableReplicas: rs.Status.AvailableReplicas,
			ObservedGeneration: rs.Status.ObservedGeneration,
		}}
	if rs.Spec.Selector != nil {
		rc.Spec.Selector = rs.Spec.Selector.MatchLabels
	}
	for _, c := range rs.Status.Conditions {
		rc.Status.Conditions = append(rc.Status.Conditions, corev1.ReplicationControllerCondition{
			Type: corev1.ReplicationControllerConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message})
	}
	return rc
}
