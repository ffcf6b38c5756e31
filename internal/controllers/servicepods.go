package controllers

import (
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/workqueue"
	endpointsliceutil "k8s.io/endpointslice/util"

	"github.com/admitd/admitd/internal/controllers/watchcache"
)

// SelectedPods are the pods that make a Service's endpoints, for the
// Endpoints and EndpointSlice controllers: those of its namespace in pods
// that its selector matches. It is false for a Service whose endpoints are
// not kept from pods (ExternalName, or without a selector).
func SelectedPods(svc *corev1.Service, pods *watchcache.Cache[*corev1.Pod]) ([]*corev1.Pod, bool) {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.Selector == nil {
		return nil, false
	}
	selector := labels.Set(svc.Spec.Selector).AsSelectorPreValidated()
	return pods.List(svc.Namespace, func(p *corev1.Pod) bool { return selector.Matches(labels.Set(p.Labels)) }), true
}

// ServicePodHandlers are the pod event handlers of the Endpoints and
// EndpointSlice controllers: a pod added, changed or deleted queues, after
// delay, the "namespace/name" of each Service of services whose endpoints
// it can alter (those its labels matched before or match now, if what an
// endpoint shows of it or its labels changed).
func ServicePodHandlers(services *watchcache.Cache[*corev1.Service], queue workqueue.TypedDelayingInterface[string], delay time.Duration, log *slog.Logger) watchcache.Handlers[*corev1.Pod] {
	changed := func(old, cur *corev1.Pod) {
		key := endpointsliceutil.GetPodUpdateProjectionKey(old, cur) // a nil *Pod is no pod
		if key == nil {
			return
		}
		keys, err := endpointsliceutil.GetServicesToUpdate(watchcache.ServiceLister{Cache: services}, key)
		if err != nil {
			log.Warn("finding the Services of a pod", "err", err)
			return
		}
		for k := range keys {
			queue.AddAfter(k, delay)
		}
	}
	return watchcache.Handlers[*corev1.Pod]{
		Add:    func(p *corev1.Pod) { changed(nil, p) },
		Update: changed,
		Remove: func(p *corev1.Pod) { changed(p, nil) },
	}
}
