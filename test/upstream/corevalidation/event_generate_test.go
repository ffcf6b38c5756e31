package corevalidation

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var (
	eventAt    = time.Date(2026, 3, 1, 10, 0, 0, 123456789, time.UTC)
	eventNames = []string{"", "kubelet", "example.com/ctrl", "bad name!", strings.Repeat("c", 64), "default-scheduler"}
)

func (g *generator) microTime() metav1.MicroTime {
	if g.chance(3) {
		return metav1.MicroTime{}
	}
	return metav1.NewMicroTime(eventAt.Add(time.Duration(g.rng.Intn(3)) * time.Second))
}

func (g *generator) timestamp() metav1.Time {
	if g.chance(2) {
		return metav1.Time{}
	}
	return metav1.NewTime(eventAt.Truncate(time.Second))
}

// objectRef is a reference to an object, mostly in namespace ns.
func (g *generator) objectRef(ns string) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: g.mostly("Pod", "", "Node"), Namespace: g.mostly(ns, "", "default", "kube-system", "team-a"),
		Name: g.mostly("web-1", "", "Bad_Name"), UID: "u1", APIVersion: g.mostly("v1", "", "apps/v1"), FieldPath: g.mostly("", "spec.containers{web}")}
}

// event is an Event as a client of the old API (no eventTime; sometimes
// one) or of the new one (less often when oldStyle is rare) writes it.
func (g *generator) event(oldStyle int) *corev1.Event {
	m := g.meta("web-1.17a")
	ev := &corev1.Event{ObjectMeta: m, InvolvedObject: g.objectRef(m.Namespace),
		Reason:  g.mostly("Started", "", strings.Repeat("r", 129)),
		Message: g.mostly("Started container web", "", strings.Repeat("m", 1025)),
		Type:    g.mostly(g.pick("Normal", "Warning"), "", "Bogus"),
	}
	if g.chance(oldStyle) {
		ev.Source = corev1.EventSource{Component: g.mostly("kubelet", ""), Host: g.mostly("", "node-1")}
		ev.FirstTimestamp, ev.LastTimestamp = g.timestamp(), g.timestamp()
		ev.Count = int32(g.rng.Intn(3))
		if g.chance(4) {
			ev.EventTime = g.microTime()
		}
		return ev
	}
	ev.EventTime = g.microTime()
	ev.ReportingController = g.mostly("example.com/ctrl", eventNames...)
	ev.ReportingInstance = g.mostly("ctrl-1", "", strings.Repeat("i", 129))
	ev.Action = g.mostly("Pulling", "", strings.Repeat("a", 129))
	if g.chance(3) {
		ev.Series = &corev1.EventSeries{Count: int32(g.rng.Intn(4)), LastObservedTime: g.microTime()}
	}
	if g.chance(4) {
		r := g.objectRef(m.Namespace)
		ev.Related = &r
	}
	if g.chance(6) {
		ev.Source.Component = "kubelet"
	}
	if g.chance(6) {
		ev.Count = 2
	}
	if g.chance(6) {
		ev.FirstTimestamp = g.timestamp()
	}
	return ev
}

// eventsV1Of is ev as an events.k8s.io/v1 client sends it.
func eventsV1Of(ev *corev1.Event) *eventsv1.Event {
	out := &eventsv1.Event{ObjectMeta: ev.ObjectMeta, EventTime: ev.EventTime, ReportingController: ev.ReportingController,
		ReportingInstance: ev.ReportingInstance, Action: ev.Action, Reason: ev.Reason, Regarding: ev.InvolvedObject,
		Related: ev.Related, Note: ev.Message, Type: ev.Type, DeprecatedSource: ev.Source,
		DeprecatedFirstTimestamp: ev.FirstTimestamp, DeprecatedLastTimestamp: ev.LastTimestamp, DeprecatedCount: ev.Count}
	if ev.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: ev.Series.Count, LastObservedTime: ev.Series.LastObservedTime}
	}
	return out
}

func (g *generator) changeEvent(ev *corev1.Event, oldStyle int) {
	f := g.event(oldStyle)
	switch g.rng.Intn(8) {
	case 0:
		ev.Series = &corev1.EventSeries{Count: int32(g.rng.Intn(5)), LastObservedTime: g.microTime()}
	case 1:
		ev.Count++
		ev.LastTimestamp = metav1.NewTime(eventAt.Add(time.Minute).Truncate(time.Second))
	case 2:
		ev.Message, ev.Reason = f.Message, f.Reason
	case 3:
		ev.EventTime = metav1.NewMicroTime(ev.EventTime.Truncate(time.Microsecond).Add(time.Duration(g.rng.Intn(2)) * time.Microsecond))
	case 4:
		ev.ReportingController, ev.ReportingInstance, ev.Action = f.ReportingController, f.ReportingInstance, f.Action
	case 5:
		ev.InvolvedObject, ev.Related, ev.Source, ev.Type = f.InvolvedObject, f.Related, f.Source, f.Type
	case 6:
		*ev = *f
	}
}

func (g *generator) change(obj runtime.Object) {
	switch o := obj.(type) {
	case *corev1.ResourceQuota:
		g.changeQuota(o)
	case *corev1.LimitRange:
		g.changeLimitRange(o)
	case *appsv1.ControllerRevision:
		g.changeRevision(o)
	case *corev1.Event:
		g.changeEvent(o, 2)
	case *eventsv1.Event:
		ev := coreOf(o)
		g.changeEvent(ev, 5)
		*o = *eventsV1Of(ev)
	default:
		panic(fmt.Sprintf("%T", obj))
	}
}

// coreOf is an events.k8s.io/v1 Event as the core Event it is stored as.
func coreOf(ev *eventsv1.Event) *corev1.Event {
	out := &corev1.Event{ObjectMeta: ev.ObjectMeta, InvolvedObject: ev.Regarding, Reason: ev.Reason, Message: ev.Note,
		Source: ev.DeprecatedSource, FirstTimestamp: ev.DeprecatedFirstTimestamp, LastTimestamp: ev.DeprecatedLastTimestamp,
		Count: ev.DeprecatedCount, Type: ev.Type, EventTime: ev.EventTime, Action: ev.Action, Related: ev.Related,
		ReportingController: ev.ReportingController, ReportingInstance: ev.ReportingInstance}
	if ev.Series != nil {
		out.Series = &corev1.EventSeries{Count: ev.Series.Count, LastObservedTime: ev.Series.LastObservedTime}
	}
	return out
}
