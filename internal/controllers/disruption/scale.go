package disruption

import (
	"context"
	"fmt"
	"slices"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// scaled is a controller of pods and its desired number of replicas.
type scaled struct {
	uid      types.UID
	replicas int32
}

// finder finds the controller ref names, if it is of its kind (nil
// otherwise).
type finder func(ctx context.Context, ref *metav1.OwnerReference, namespace string) (*scaled, error)

// finders are tried in upstream's order: the kinds the controller has
// caches of, then any owner's scale subresource.
func (c *Controller) finders() []finder {
	return []finder{c.replicationController, c.deploymentOfReplicaSet, c.replicaSet, c.statefulSet, c.scaleSubresource}
}

// expectedPodCount is how many pods the budget expects and how many of
// them must be healthy: minAvailable as a number expects the pods
// selected; a percentage (of minAvailable or maxUnavailable, rounded up)
// and maxUnavailable expect the sum of the pods' controllers' scale.
// Pods without a controller are listed apart, not counted.
func (c *Controller) expectedPodCount(ctx context.Context, pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod) (expected, desired int32, unmanaged []string, err error) {
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		if expected, unmanaged, err = c.expectedScale(ctx, pods); err != nil {
			return 0, 0, unmanaged, err
		}
		maxUnavailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(expected), true)
		if err != nil {
			return expected, 0, unmanaged, err
		}
		return expected, max(expected-int32(maxUnavailable), 0), unmanaged, nil
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.Int:
		return int32(len(pods)), pdb.Spec.MinAvailable.IntVal, nil, nil
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.String:
		if expected, unmanaged, err = c.expectedScale(ctx, pods); err != nil {
			return 0, 0, unmanaged, err
		}
		minAvailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(expected), true)
		if err != nil {
			return expected, 0, unmanaged, err
		}
		return expected, int32(minAvailable), unmanaged, nil
	}
	return 0, 0, nil, nil
}

// expectedScale sums the scale of the pods' controllers, each once; a pod
// without a controller is listed as unmanaged, one whose controller is not
// found is an error.
func (c *Controller) expectedScale(ctx context.Context, pods []*corev1.Pod) (int32, []string, error) {
	scales := map[types.UID]int32{}
	var unmanaged []string
	for _, pod := range pods {
		ref := metav1.GetControllerOfNoCopy(pod)
		if ref == nil {
			unmanaged = append(unmanaged, pod.Name)
			continue
		}
		if _, ok := scales[ref.UID]; ok {
			continue
		}
		found := false
		for _, find := range c.finders() {
			s, err := find(ctx, ref, pod.Namespace)
			if err != nil {
				return 0, unmanaged, err
			}
			if s != nil {
				scales[s.uid] = s.replicas
				found = true
				break
			}
		}
		if !found {
			return 0, unmanaged, fmt.Errorf("found no controllers for pod %q", pod.Name)
		}
	}
	var expected int32
	for _, n := range scales {
		expected += n
	}
	return expected, unmanaged, nil
}

// isKind: ref names kind in one of groups; an unparseable apiVersion is an
// error.
func isKind(ref *metav1.OwnerReference, kind string, groups ...string) (bool, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false, err
	}
	return ref.Kind == kind && slices.Contains(groups, gv.Group), nil
}

func (c *Controller) replicationController(_ context.Context, ref *metav1.OwnerReference, ns string) (*scaled, error) {
	if ok, err := isKind(ref, "ReplicationController", ""); !ok || err != nil {
		return nil, err
	}
	rc, ok := c.rcs.Get(ns, ref.Name)
	if !ok || rc.UID != ref.UID {
		return nil, nil
	}
	return &scaled{rc.UID, replicasOf(rc.Spec.Replicas)}, nil
}

// deploymentOfReplicaSet is the Deployment controlling the ReplicaSet ref
// names.
func (c *Controller) deploymentOfReplicaSet(_ context.Context, ref *metav1.OwnerReference, ns string) (*scaled, error) {
	if ok, err := isKind(ref, "ReplicaSet", "apps", "extensions"); !ok || err != nil {
		return nil, err
	}
	rs, ok := c.replicaSets.Get(ns, ref.Name)
	if !ok || rs.UID != ref.UID {
		return nil, nil
	}
	dref := metav1.GetControllerOfNoCopy(rs)
	if dref == nil {
		return nil, nil
	}
	if ok, err := isKind(dref, "Deployment", "apps", "extensions"); !ok || err != nil {
		return nil, err
	}
	d, ok := c.deployments.Get(ns, dref.Name)
	if !ok || d.UID != dref.UID {
		return nil, nil
	}
	return &scaled{d.UID, replicasOf(d.Spec.Replicas)}, nil
}

// replicaSet is the ReplicaSet ref names, unless a Deployment controls it.
func (c *Controller) replicaSet(_ context.Context, ref *metav1.OwnerReference, ns string) (*scaled, error) {
	if ok, err := isKind(ref, "ReplicaSet", "apps", "extensions"); !ok || err != nil {
		return nil, err
	}
	rs, ok := c.replicaSets.Get(ns, ref.Name)
	if !ok || rs.UID != ref.UID {
		return nil, nil
	}
	if dref := metav1.GetControllerOfNoCopy(rs); dref != nil && dref.Kind == "Deployment" {
		return nil, nil
	}
	return &scaled{rs.UID, replicasOf(rs.Spec.Replicas)}, nil
}

func (c *Controller) statefulSet(_ context.Context, ref *metav1.OwnerReference, ns string) (*scaled, error) {
	if ok, err := isKind(ref, "StatefulSet", "apps"); !ok || err != nil {
		return nil, err
	}
	ss, ok := c.statefulSets.Get(ns, ref.Name)
	if !ok || ss.UID != ref.UID {
		return nil, nil
	}
	return &scaled{ss.UID, replicasOf(ss.Spec.Replicas)}, nil
}

// scaleSubresource reads the scale subresource of the owner ref names,
// from the server; an owner whose resource has none is an error.
func (c *Controller) scaleSubresource(ctx context.Context, ref *metav1.OwnerReference, ns string) (*scaled, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, err
	}
	res, ok := c.cat.LookupKind(gv.WithKind(ref.Kind))
	if !ok {
		return nil, &apimeta.NoKindMatchError{GroupKind: schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, SearchedVersions: []string{gv.Version}}
	}
	gvr := res.GroupVersionResource
	var scale autoscalingv1.Scale
	err = c.client.CoreV1().RESTClient().Get().AbsPath(scalePath(gvr, ns, ref.Name)...).Do(ctx).Into(&scale)
	if apierrors.IsNotFound(err) {
		has, err := c.servesScale(gvr)
		if err != nil {
			return nil, err
		}
		if !has {
			return nil, fmt.Errorf("%s does not implement the scale subresource", gvr.GroupResource())
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if scale.UID != ref.UID {
		return nil, nil
	}
	return &scaled{scale.UID, scale.Spec.Replicas}, nil
}

func scalePath(gvr schema.GroupVersionResource, ns, name string) []string {
	root := []string{"/apis", gvr.Group, gvr.Version}
	if gvr.Group == "" {
		root = []string{"/api", gvr.Version}
	}
	return append(root, "namespaces", ns, gvr.Resource, name, "scale")
}

// scaleVersions are the groups and versions of the Scale kinds client-go's
// scale client reads.
var scaleVersions = []schema.GroupVersion{{Group: "autoscaling", Version: "v1"}, {Group: "extensions", Version: "v1beta1"},
	{Group: "apps", Version: "v1beta1"}, {Group: "apps", Version: "v1beta2"}}

// servesScale asks the server's discovery whether gvr has a scale
// subresource of a Scale kind.
func (c *Controller) servesScale(gvr schema.GroupVersionResource) (bool, error) {
	list, err := c.client.Discovery().ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		return false, err
	}
	for _, r := range list.APIResources {
		if r.Name == gvr.Resource+"/scale" && r.Kind == "Scale" && slices.Contains(scaleVersions, schema.GroupVersion{Group: r.Group, Version: r.Version}) {
			return true, nil
		}
	}
	return false, nil
}

func replicasOf(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
