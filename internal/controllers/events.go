package controllers

import (
	"context"
	"log/slog"
	"net/http"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// NewClientset returns a typed client that sends its requests through rt
// (the API server's loopback transport), without client-side rate limits.
// It makes a REST client for every group version; NewCoreClient makes
// core/v1's alone.
func NewClientset(rt http.RoundTripper) (kubernetes.Interface, error) {
	return kubernetes.NewForConfigAndClient(loopbackConfig(), &http.Client{Transport: userAgentTransport{rt}})
}

// NewCoreClient returns a core/v1 typed client that sends its requests
// through rt, as NewClientset's CoreV1.
func NewCoreClient(rt http.RoundTripper) (typedcorev1.CoreV1Interface, error) {
	return typedcorev1.NewForConfigAndClient(loopbackConfig(), &http.Client{Transport: userAgentTransport{rt}})
}

// NewEventRecorder returns a recorder of core/v1 Events from component
// (the events' source, as kube-controller-manager names it:
// "replicaset-controller"), written through rt as the controller's user
// until ctx ends. It is client-go's recorder, as kube-controller-manager's
// controllers use: repeated events are aggregated into counts and a
// source's bursts are rate-limited before they reach the server. Each
// event is also logged at debug level.
//
// The recorder's broadcaster (three goroutines, two queues of a thousand
// events and a client) starts with the first event: most of a server's
// controllers never record one. (The fifteen recorders of an idle
// server held about 1 MB of heap and 55 goroutines.)
func NewEventRecorder(ctx context.Context, rt http.RoundTripper, component string, log *slog.Logger) (record.EventRecorder, error) {
	core, err := NewCoreClient(rt)
	if err != nil {
		return nil, err
	}
	return &lazyRecorder{start: func() record.EventRecorder {
		return startEventRecorder(ctx, core, component, log)
	}}, nil
}

// startEventRecorder starts a broadcaster that writes to core's Events
// and logs, and shuts it down when ctx ends.
func startEventRecorder(ctx context.Context, core typedcorev1.CoreV1Interface, component string, log *slog.Logger) record.EventRecorder {
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: core.Events("")})
	b.StartEventWatcher(func(e *corev1.Event) {
		log.Debug("event", "object", e.InvolvedObject.Kind+" "+e.InvolvedObject.Namespace+"/"+e.InvolvedObject.Name,
			"type", e.Type, "reason", e.Reason, "message", e.Message)
	})
	go func() {
		<-ctx.Done()
		b.Shutdown()
	}()
	return b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component})
}

// lazyRecorder is a record.EventRecorder that calls start for the
// recorder it passes events to when the first event comes.
type lazyRecorder struct {
	once  sync.Once
	start func() record.EventRecorder
	rec   record.EventRecorder
}

var _ record.EventRecorder = (*lazyRecorder)(nil)

func (r *lazyRecorder) recorder() record.EventRecorder {
	r.once.Do(func() { r.rec = r.start() })
	return r.rec
}

func (r *lazyRecorder) Event(object runtime.Object, eventtype, reason, message string) {
	r.recorder().Event(object, eventtype, reason, message)
}

func (r *lazyRecorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	r.recorder().Eventf(object, eventtype, reason, messageFmt, args...)
}

func (r *lazyRecorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	r.recorder().AnnotatedEventf(object, annotations, eventtype, reason, messageFmt, args...)
}
