package registry

import (
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Event validation, as kube-apiserver 1.37's ValidateEventCreate and
// ValidateEventUpdate, which depend on the version the request names:
// through core v1 an Event only has to make sense (legacyEventErrors), so
// old clients keep working; through events.k8s.io/v1 it also meets the new
// API's rules, metadata included, and an update may change little more
// than the series. Both versions store the same object; the errors name
// the core fields (involvedObject, message, source, ...) either way.
// Metadata otherwise gets only the common checks (Strategy.GenericMetadata).

const (
	eventReportingInstanceLimit = 128
	eventActionLimit            = 128
	eventReasonLimit            = 128
	eventNoteLimit              = 1024
)

func validateCoreEvent(obj runtime.Object) field.ErrorList {
	return legacyEventErrors(obj.(*corev1.Event), "reportingComponent")
}

func validateCoreEventUpdate(obj, _ runtime.Object) field.ErrorList {
	return legacyEventErrors(obj.(*corev1.Event), "reportingComponent")
}

// validateEventsV1Event: the legacy rules, then the new API's.
func validateEventsV1Event(obj runtime.Object) field.ErrorList {
	ev := coreEventOf(obj)
	errs := legacyEventErrors(ev, "reportingController")
	errs = append(errs, ValidateObjectMeta(obj, true, apivalidation.NameIsDNSSubdomain)...)
	errs = append(errs, eventSeriesErrors(ev.Series)...)
	if ev.EventTime.Time == (time.Time{}) {
		errs = append(errs, field.Required(field.NewPath("eventTime"), ""))
	}
	if ev.Type != corev1.EventTypeNormal && ev.Type != corev1.EventTypeWarning {
		errs = append(errs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", ev.Type)))
	}
	for _, unset := range []struct {
		name string
		set  bool
	}{
		{"firstTimestamp", ev.FirstTimestamp.Time != (time.Time{})}, {"lastTimestamp", ev.LastTimestamp.Time != (time.Time{})},
		{"count", ev.Count != 0}, {"source", ev.Source.Component != "" || ev.Source.Host != ""},
	} {
		if unset.set {
			errs = append(errs, field.Invalid(field.NewPath(unset.name), "", "needs to be unset"))
		}
	}
	return errs
}

// validateEventsV1EventUpdate: the legacy rules, a new series checked, and
// everything else the event says fixed (eventTime to the microsecond).
func validateEventsV1EventUpdate(obj, old runtime.Object) field.ErrorList {
	ev, was := coreEventOf(obj), coreEventOf(old)
	errs := legacyEventErrors(ev, "reportingController")
	errs = append(errs, ValidateObjectMetaUpdate(obj, old)...)
	if !reflect.DeepEqual(ev.Series, was.Series) {
		errs = append(errs, eventSeriesErrors(ev.Series)...)
	}
	immutable := func(name string, v, oldV any) {
		errs = append(errs, apivalidation.ValidateImmutableField(v, oldV, field.NewPath(name))...)
	}
	immutable("involvedObject", internalObjectReferenceOf(ev.InvolvedObject), internalObjectReferenceOf(was.InvolvedObject))
	immutable("reason", ev.Reason, was.Reason)
	immutable("message", ev.Message, was.Message)
	immutable("source", internalEventSource(ev.Source), internalEventSource(was.Source))
	immutable("firstTimestamp", ev.FirstTimestamp, was.FirstTimestamp)
	immutable("lastTimestamp", ev.LastTimestamp, was.LastTimestamp)
	immutable("count", ev.Count, was.Count)
	immutable("reason", ev.Reason, was.Reason) // upstream checks it twice
	immutable("type", ev.Type, was.Type)
	if !ev.EventTime.Truncate(time.Microsecond).UTC().Equal(was.EventTime.Truncate(time.Microsecond).UTC()) {
		immutable("eventTime", ev.EventTime, was.EventTime)
	}
	immutable("action", ev.Action, was.Action)
	immutable("related", internalObjectReferencePtr(ev.Related), internalObjectReferencePtr(was.Related))
	immutable("reportingController", ev.ReportingController, was.ReportingController)
	immutable("reportingInstance", ev.ReportingInstance, was.ReportingInstance)
	return errs
}

// legacyEventErrors are the rules every Event meets. One without an
// eventTime (written by an old client) only needs its namespace to agree
// with its object's; one with it needs who reported it, what was done and
// why, within the length limits.
func legacyEventErrors(ev *corev1.Event, reportingControllerField string) field.ErrorList {
	var errs field.ErrorList
	nsPath := field.NewPath("involvedObject", "namespace")
	mismatch := field.Invalid(nsPath, ev.InvolvedObject.Namespace, "does not match event.namespace")
	if ev.EventTime.Time == (time.Time{}) {
		if ev.InvolvedObject.Namespace == "" {
			if ev.Namespace != metav1.NamespaceNone && ev.Namespace != metav1.NamespaceDefault {
				errs = append(errs, mismatch)
			}
		} else if ev.Namespace != ev.InvolvedObject.Namespace {
			errs = append(errs, mismatch)
		}
		return errs
	}
	if ev.InvolvedObject.Namespace == "" && ev.Namespace != metav1.NamespaceDefault && ev.Namespace != metav1.NamespaceSystem {
		errs = append(errs, mismatch)
	}
	controller := field.NewPath(reportingControllerField)
	if ev.ReportingController == "" {
		errs = append(errs, field.Required(controller, ""))
	}
	for _, msg := range validation.IsQualifiedName(ev.ReportingController) {
		errs = append(errs, field.Invalid(controller, ev.ReportingController, msg).WithOrigin("format=qualified-name"))
	}
	errs = append(errs, requiredWithin(ev.ReportingInstance, "reportingInstance", eventReportingInstanceLimit)...)
	errs = append(errs, requiredWithin(ev.Action, "action", eventActionLimit)...)
	errs = append(errs, requiredWithin(ev.Reason, "reason", eventReasonLimit)...)
	if len(ev.Message) > eventNoteLimit {
		errs = append(errs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", eventNoteLimit)))
	}
	return errs
}

// requiredWithin: value given and at most limit bytes long.
func requiredWithin(value, name string, limit int) field.ErrorList {
	var errs field.ErrorList
	if value == "" {
		errs = append(errs, field.Required(field.NewPath(name), ""))
	}
	if len(value) > limit {
		errs = append(errs, field.Invalid(field.NewPath(name), "", fmt.Sprintf("can have at most %v characters", limit)))
	}
	return errs
}

func eventSeriesErrors(series *corev1.EventSeries) field.ErrorList {
	if series == nil {
		return nil
	}
	var errs field.ErrorList
	if series.Count < 2 {
		errs = append(errs, field.Invalid(field.NewPath("series.count"), "", "should be at least 2"))
	}
	if series.LastObservedTime.Time == (time.Time{}) {
		errs = append(errs, field.Required(field.NewPath("series.lastObservedTime"), ""))
	}
	return errs
}

// coreEventOf is an events.k8s.io/v1 Event as the core Event it is stored
// as (the fields upstream's validation names); a core Event (a stored one
// handed over as it is) is itself.
func coreEventOf(obj runtime.Object) *corev1.Event {
	if ev, ok := obj.(*corev1.Event); ok {
		return ev
	}
	out := &corev1.Event{}
	convertEventsV1ToCoreEvent(obj.(*eventsv1.Event), out)
	return out
}

// internalObjectReference is an object reference as upstream's errors show
// it: its internal type, whose fields have no JSON names or omitempty.
type internalObjectReference struct {
	Kind, Namespace, Name string
	UID                   types.UID
	APIVersion            string
	ResourceVersion       string
	FieldPath             string
}

func internalObjectReferenceOf(r corev1.ObjectReference) internalObjectReference {
	return internalObjectReference{r.Kind, r.Namespace, r.Name, r.UID, r.APIVersion, r.ResourceVersion, r.FieldPath}
}

func internalObjectReferencePtr(r *corev1.ObjectReference) *internalObjectReference {
	if r == nil {
		return nil
	}
	out := internalObjectReferenceOf(*r)
	return &out
}

// internalEventSource is an event source as upstream's errors show it.
type internalEventSource struct{ Component, Host string }
