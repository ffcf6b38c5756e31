package server

import (
	"fmt"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

func oneShotJob(ttl *int32) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "once"}, Spec: batchv1.JobSpec{TTLSecondsAfterFinished: ttl,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
}

// finishJobPod waits for the Job's pod and writes it Succeeded, as its
// kubelet would (no nodes here).
func finishJobPod(t *testing.T, c kubernetes.Interface, ns string) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	eventually(t, "the Job's pod", func() (bool, string) {
		pods, err := c.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=once"})
		if err != nil || len(pods.Items) != 1 {
			return false, fmt.Sprintf("%v pods, %v", len(pods.Items), err)
		}
		pod = &pods.Items[0]
		return true, ""
	})
	if !slices.Contains(pod.Finalizers, batchv1.JobTrackingFinalizer) {
		t.Errorf("pod %s finalizers %v, want the job-tracking finalizer", pod.Name, pod.Finalizers)
	}
	pod.Status.Phase = corev1.PodSucceeded
	if _, err := c.CoreV1().Pods(ns).UpdateStatus(t.Context(), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return pod
}

// A Job's pod is created with the tracking finalizer; once it succeeded
// the Job completes, and with ttlSecondsAfterFinished 0 it is deleted with
// its pods (foreground).
func TestJobCompletesAndExpires(t *testing.T) {
	c := startWithControllers(t)
	readyNamespace(t, c, "batch", nil)
	if _, err := c.BatchV1().Jobs("batch").Create(t.Context(), oneShotJob(ptr.To(int32(0))), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := finishJobPod(t, c, "batch")
	eventually(t, "the Job deleted after its TTL, and its pod", func() (bool, string) {
		_, jobErr := c.BatchV1().Jobs("batch").Get(t.Context(), "once", metav1.GetOptions{})
		_, podErr := c.CoreV1().Pods("batch").Get(t.Context(), pod.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(jobErr) && apierrors.IsNotFound(podErr), fmt.Sprintf("job: %v, pod: %v", jobErr, podErr)
	})
}

// --controllers=*,-job-controller leaves Jobs without pods;
// -ttl-after-finished-controller leaves finished Jobs in place.
func TestControllersFlagDisablesJobControllers(t *testing.T) {
	c := startWithControllers(t, "*", "-job")
	readyNamespace(t, c, "off", nil)
	if _, err := c.BatchV1().Jobs("off").Create(t.Context(), oneShotJob(nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if pods, err := c.CoreV1().Pods("off").List(t.Context(), metav1.ListOptions{}); err != nil || len(pods.Items) != 0 {
		t.Errorf("pods: %d, %v; want none with the Job controller off", len(pods.Items), err)
	}

	c = startWithControllers(t, "*", "-ttl-after-finished-controller")
	readyNamespace(t, c, "kept", nil)
	if _, err := c.BatchV1().Jobs("kept").Create(t.Context(), oneShotJob(ptr.To(int32(0))), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	finishJobPod(t, c, "kept")
	eventually(t, "the Job Complete", func() (bool, string) {
		j, err := c.BatchV1().Jobs("kept").Get(t.Context(), "once", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, cond := range j.Status.Conditions {
			if cond.Type == batchv1.JobComplete && cond.Status == corev1.ConditionTrue {
				return true, ""
			}
		}
		return false, fmt.Sprintf("conditions %+v", j.Status.Conditions)
	})
	time.Sleep(time.Second)
	if _, err := c.BatchV1().Jobs("kept").Get(t.Context(), "once", metav1.GetOptions{}); err != nil {
		t.Errorf("finished Job with TTL 0 and the TTL controller off: %v, want it kept", err)
	}
}

// A Job deleted with orphan propagation leaves its pod without the
// job-tracking finalizer (the controller releases the pods of a Job being
// deleted), and a pod with the finalizer that no Job controls loses it
// (upstream's orphan pod cleanup): nothing keeps them from being deleted.
func TestOrphanedJobPodLosesItsFinalizer(t *testing.T) {
	c := startWithControllers(t)
	readyNamespace(t, c, "orphans", nil)
	if _, err := c.BatchV1().Jobs("orphans").Create(t.Context(), oneShotJob(nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pod *corev1.Pod
	eventually(t, "the Job's pod", func() (bool, string) {
		pods, err := c.CoreV1().Pods("orphans").List(t.Context(), metav1.ListOptions{})
		if err != nil || len(pods.Items) != 1 {
			return false, fmt.Sprintf("%v pods, %v", len(pods.Items), err)
		}
		pod = &pods.Items[0]
		return slices.Contains(pod.Finalizers, batchv1.JobTrackingFinalizer), fmt.Sprintf("finalizers %v", pod.Finalizers)
	})
	if err := c.BatchV1().Jobs("orphans").Delete(t.Context(), "once", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the orphan without owner or finalizer", func() (bool, string) {
		p, err := c.CoreV1().Pods("orphans").Get(t.Context(), pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(p.OwnerReferences) == 0 && len(p.Finalizers) == 0, fmt.Sprintf("owners %v, finalizers %v", p.OwnerReferences, p.Finalizers)
	})
	stray := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "stray", Finalizers: []string{batchv1.JobTrackingFinalizer}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	if _, err := c.CoreV1().Pods("orphans").Create(t.Context(), stray, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the stray pod without the finalizer", func() (bool, string) {
		p, err := c.CoreV1().Pods("orphans").Get(t.Context(), "stray", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(p.Finalizers) == 0, fmt.Sprintf("finalizers %v", p.Finalizers)
	})
}
