package job

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/controllers"
)

// podsForJob returns the pods j controls, after adopting the orphans its
// selector matches (with the tracking finalizer) and releasing those it no
// longer matches (upstream's PodControllerRefManager). The pods are the
// cache's; an adopted one is returned as a copy with the finalizer.
func (c *Controller) podsForJob(ctx context.Context, j *batchv1.Job) ([]*corev1.Pod, error) {
	selector, err := metav1.LabelSelectorAsSelector(j.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("couldn't convert Job selector: %v", err)
	}
	candidates := controllers.PodsOfController(c.pods, j, "Job", true)
	m := &controllers.ControllerRefManager[*corev1.Pod]{Owner: j, OwnerKind: jobKind, Kind: "Pod", Selector: selector,
		Finalizers: []string{batchv1.JobTrackingFinalizer},
		Get: func(ctx context.Context) (metav1.Object, error) {
			return c.client.BatchV1().Jobs(j.Namespace).Get(ctx, j.Name, metav1.GetOptions{})
		},
		Patch: controllers.PatchPods(c.client)}
	claimed, err := m.Claim(ctx, candidates)
	for i, p := range claimed {
		if metav1.GetControllerOfNoCopy(p) == nil && !hasTrackingFinalizer(p) {
			claimed[i] = p.DeepCopy() // adopted: it has the finalizer now
			claimed[i].Finalizers = append(claimed[i].Finalizers, batchv1.JobTrackingFinalizer)
		}
	}
	return claimed, err
}
