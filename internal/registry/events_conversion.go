package registry

import (
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// Conversion of Events between core/v1 (the storage version) and
// events.k8s.io/v1, as upstream's pkg/apis/events/v1/conversion.go: the
// two are one resource, so each field of one has its place in the other
// (involvedObject is regarding, message is note, source, firstTimestamp,
// lastTimestamp and count are the deprecated* fields, reportingComponent
// is reportingController); metadata and the remaining fields carry over.

// addEventConversions registers both directions in s.
func addEventConversions(s *runtime.Scheme) {
	utilruntime.Must(s.AddConversionFunc((*corev1.Event)(nil), (*eventsv1.Event)(nil),
		func(a, b any, _ conversion.Scope) error {
			convertCoreEventToEventsV1(a.(*corev1.Event), b.(*eventsv1.Event))
			return nil
		}))
	utilruntime.Must(s.AddConversionFunc((*eventsv1.Event)(nil), (*corev1.Event)(nil),
		func(a, b any, _ conversion.Scope) error {
			convertEventsV1ToCoreEvent(a.(*eventsv1.Event), b.(*corev1.Event))
			return nil
		}))
}

// convertCoreEventToEventsV1 writes in as out.
func convertCoreEventToEventsV1(in *corev1.Event, out *eventsv1.Event) {
	in = in.DeepCopy()
	*out = eventsv1.Event{
		TypeMeta:                 out.TypeMeta,
		ObjectMeta:               in.ObjectMeta,
		EventTime:                in.EventTime,
		Series:                   seriesToEventsV1(in.Series),
		ReportingController:      in.ReportingController,
		ReportingInstance:        in.ReportingInstance,
		Action:                   in.Action,
		Reason:                   in.Reason,
		Regarding:                in.InvolvedObject,
		Related:                  in.Related,
		Note:                     in.Message,
		Type:                     in.Type,
		DeprecatedSource:         in.Source,
		DeprecatedFirstTimestamp: in.FirstTimestamp,
		DeprecatedLastTimestamp:  in.LastTimestamp,
		DeprecatedCount:          in.Count,
	}
}

// convertEventsV1ToCoreEvent writes in as out.
func convertEventsV1ToCoreEvent(in *eventsv1.Event, out *corev1.Event) {
	in = in.DeepCopy()
	*out = corev1.Event{
		TypeMeta:            out.TypeMeta,
		ObjectMeta:          in.ObjectMeta,
		InvolvedObject:      in.Regarding,
		Reason:              in.Reason,
		Message:             in.Note,
		Source:              in.DeprecatedSource,
		FirstTimestamp:      in.DeprecatedFirstTimestamp,
		LastTimestamp:       in.DeprecatedLastTimestamp,
		Count:               in.DeprecatedCount,
		Type:                in.Type,
		EventTime:           in.EventTime,
		Series:              seriesToCore(in.Series),
		Action:              in.Action,
		Related:             in.Related,
		ReportingController: in.ReportingController,
		ReportingInstance:   in.ReportingInstance,
	}
}

func seriesToEventsV1(in *corev1.EventSeries) *eventsv1.EventSeries {
	if in == nil {
		return nil
	}
	return &eventsv1.EventSeries{Count: in.Count, LastObservedTime: in.LastObservedTime}
}

func seriesToCore(in *eventsv1.EventSeries) *corev1.EventSeries {
	if in == nil {
		return nil
	}
	return &corev1.EventSeries{Count: in.Count, LastObservedTime: in.LastObservedTime}
}
