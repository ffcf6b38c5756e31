package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// bench is one run: its Deployments, the pods it watches, the processes it
// measures.
type bench struct {
	cs          kubernetes.Interface
	ns          string
	deployments int
	replicas    int
	grace       int64
	server      string
	procs       []proc
	timeout     time.Duration

	pods     cache.Store
	stopPods chan struct{}
}

func (b *bench) total() int { return b.deployments * b.replicas }

// prepare creates the namespace, waits for its default ServiceAccount (the
// ServiceAccount admission plugin refuses pods without it) and starts
// watching its pods.
func (b *bench) prepare(ctx context.Context) error {
	_, err := b.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: b.ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if err := poll(ctx, time.Minute, 100*time.Millisecond, func() (bool, error) {
		_, err := b.cs.CoreV1().ServiceAccounts(b.ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		return fmt.Errorf("namespace %s has no default ServiceAccount: %w", b.ns, err)
	}
	lw := cache.NewListWatchFromClient(b.cs.CoreV1().RESTClient(), "pods", b.ns, fields.Everything())
	informer := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
	b.stopPods = make(chan struct{})
	go informer.Run(b.stopPods)
	if !cache.WaitForCacheSync(b.stopPods, informer.HasSynced) {
		return errors.New("the pod informer did not sync")
	}
	b.pods = informer.GetStore()
	if n := len(b.pods.List()); n != 0 {
		return fmt.Errorf("namespace %s already has %d pods", b.ns, n)
	}
	return nil
}

func (b *bench) stop() { close(b.stopPods) }

// counts is how many pods exist (not being deleted), how many of them are
// Running and Ready, and how many there are at all.
func (b *bench) counts() (created, ready, all int) {
	for _, o := range b.pods.List() {
		p := o.(*corev1.Pod)
		all++
		if p.DeletionTimestamp != nil {
			continue
		}
		created++
		if p.Status.Phase == corev1.PodRunning && podReady(p) {
			ready++
		}
	}
	return created, ready, all
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// create creates the Deployments and waits until all their pods exist, and
// with untilReady until all are Running and Ready.
func (b *bench) create(ctx context.Context, untilReady bool) error {
	m := startMeter(b.procs)
	start := time.Now()
	if err := b.each(func(i int) error {
		_, err := b.cs.AppsV1().Deployments(b.ns).Create(ctx, b.deployment(i), metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	var createdAfter time.Duration
	var cpuCreated []int64
	err := poll(ctx, b.timeout, 50*time.Millisecond, func() (bool, error) {
		created, ready, _ := b.counts()
		if created >= b.total() && cpuCreated == nil {
			createdAfter, cpuCreated = time.Since(start), m.cpuNow()
		}
		return cpuCreated != nil && (!untilReady || ready >= b.total()), nil
	})
	took := time.Since(start)
	use, merr := m.stop()
	if err != nil {
		created, ready, _ := b.counts()
		return fmt.Errorf("after %v: %d pods created, %d ready of %d: %w", took.Round(time.Millisecond), created, ready, b.total(), err)
	}
	what := "created"
	if untilReady {
		what = fmt.Sprintf("created in %.2f s, Running and Ready", createdAfter.Seconds())
	}
	fmt.Printf("create: %d Deployments x %d replicas: %d pods %s in %.2f s\n", b.deployments, b.replicas, b.total(), what, took.Seconds())
	b.report("create", start, took, createdAfter, use, cpuCreated)
	return merr
}

// delete deletes the Deployments (background propagation, as kubectl) and
// waits until their ReplicaSets and pods are gone.
func (b *bench) delete(ctx context.Context) error {
	m := startMeter(b.procs)
	start := time.Now()
	background := metav1.DeletePropagationBackground
	if err := b.each(func(i int) error {
		return b.cs.AppsV1().Deployments(b.ns).Delete(ctx, deploymentName(i), metav1.DeleteOptions{PropagationPolicy: &background})
	}); err != nil {
		return err
	}
	err := poll(ctx, b.timeout, 50*time.Millisecond, func() (bool, error) {
		if _, _, all := b.counts(); all > 0 {
			return false, nil
		}
		rs, err := b.cs.AppsV1().ReplicaSets(b.ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(rs.Items) == 0, nil
	})
	took := time.Since(start)
	use, merr := m.stop()
	if err != nil {
		_, _, all := b.counts()
		return fmt.Errorf("after %v: %d pods left: %w", took.Round(time.Millisecond), all, err)
	}
	fmt.Printf("delete: %d pods and their ReplicaSets gone in %.2f s\n", b.total(), took.Seconds())
	b.report("delete", start, took, took, use, nil)
	return merr
}

// each runs fn for every Deployment index, 10 at a time, and returns the
// first error.
func (b *bench) each(fn func(i int) error) error {
	var wg sync.WaitGroup
	errs := make([]error, b.deployments)
	sem := make(chan struct{}, 10)
	for i := range b.deployments {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func deploymentName(i int) string { return fmt.Sprintf("bench-%02d", i) }

// deployment is what `kubectl create deployment bench-NN --image=nginx
// --replicas=R` sends, with the pods' grace period set.
func (b *bench) deployment(i int) *appsv1.Deployment {
	labels := map[string]string{"app": deploymentName(i)}
	replicas := int32(b.replicas)
	grace := b.grace
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: deploymentName(i), Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers:                    []corev1.Container{{Name: "nginx", Image: "nginx"}},
					TerminationGracePeriodSeconds: &grace,
				},
			},
		},
	}
}

// poll calls cond every interval until it is true, fails, or timeout passes.
func poll(ctx context.Context, timeout, interval time.Duration, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ok, err := cond()
		if ok || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
