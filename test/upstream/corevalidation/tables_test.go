package corevalidation

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
)

// Targeted cases, after the inputs of upstream's own validation tests
// (pkg/apis/core/validation: TestValidateResourceQuota,
// TestValidateLimitRange, the Event tests including
// TestEventV1EventTimeImmutability; pkg/apis/apps/validation:
// TestValidateControllerRevision*), as v1 objects.

func list(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func objMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default", ResourceVersion: "1"}
}

func quotaSpecs() map[string]corev1.ResourceQuotaSpec {
	sel := func(scope, op string, values ...string) *corev1.ScopeSelector {
		return &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{
			ScopeName: corev1.ResourceQuotaScope(scope), Operator: corev1.ScopeSelectorOperator(op), Values: values}}}
	}
	scopes := func(s ...corev1.ResourceQuotaScope) []corev1.ResourceQuotaScope { return s }
	return map[string]corev1.ResourceQuotaSpec{
		"everything": {Hard: list("cpu", "100", "memory", "10000", "requests.cpu", "100", "requests.memory", "10000", "limits.cpu", "100",
			"limits.memory", "10000", "pods", "10", "services", "0", "replicationcontrollers", "10", "resourcequotas", "10", "configmaps", "10",
			"secrets", "10", "count/resourceclaims.resource.k8s.io", "1", "gold.deviceclass.resource.k8s.io/devices", "1")},
		"terminating":                   {Hard: list("cpu", "100", "limits.cpu", "200"), Scopes: scopes(corev1.ResourceQuotaScopeTerminating)},
		"not terminating":               {Hard: list("cpu", "100"), Scopes: scopes(corev1.ResourceQuotaScopeNotTerminating)},
		"best effort":                   {Hard: list("pods", "100"), Scopes: scopes(corev1.ResourceQuotaScopeBestEffort)},
		"best effort with cpu":          {Hard: list("cpu", "100", "pods", "1"), Scopes: scopes(corev1.ResourceQuotaScopeBestEffort)},
		"not best effort":               {Hard: list("cpu", "100"), Scopes: scopes(corev1.ResourceQuotaScopeNotBestEffort)},
		"cross namespace":               {Hard: list("cpu", "100", "limits.cpu", "200"), Scopes: scopes(corev1.ResourceQuotaScopeCrossNamespacePodAffinity)},
		"priority class In":             {ScopeSelector: sel("PriorityClass", "In", "cluster-services")},
		"priority class In, no values":  {ScopeSelector: sel("PriorityClass", "In")},
		"priority class Exists, values": {ScopeSelector: sel("PriorityClass", "Exists", "a")},
		"best effort In":                {Hard: list("pods", "1"), ScopeSelector: sel("BestEffort", "In", "a")},
		"terminating DoesNotExist":      {ScopeSelector: sel("Terminating", "DoesNotExist")},
		"unknown operator":              {ScopeSelector: sel("PriorityClass", "Like", "a")},
		"unknown scope in selector":     {Hard: list("cpu", "1"), ScopeSelector: sel("Fast", "Exists")},
		"volume attributes class":       {Hard: list("requests.storage", "10Gi", "persistentvolumeclaims", "3"), Scopes: scopes(corev1.ResourceQuotaScopeVolumeAttributesClass)},
		"volume attributes class, pods": {Hard: list("pods", "3", "cpu", "1"), ScopeSelector: sel("VolumeAttributesClass", "In", "gold")},
		"storage":                       {Hard: list("storage", "10")},
		"negative": {Hard: list("cpu", "-100", "memory", "-10000", "pods", "-10", "services", "-10", "replicationcontrollers", "-10",
			"resourcequotas", "-10", "configmaps", "-10", "secrets", "-10")},
		"fractional cpu":          {Hard: list("cpu", "100m")},
		"fractional pods":         {Hard: list("pods", "1.5")},
		"fractional extended":     {Hard: list("requests.example.com/gpu", "0.5", "example.com/gpu", "500m")},
		"bad names":               {Hard: list("bad name", "1", "example.com/bad name", "1", "Upper", "1")},
		"conflicting":             {Hard: list("pods", "1"), Scopes: scopes(corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating)},
		"conflicting in selector": {Scopes: scopes(corev1.ResourceQuotaScopeBestEffort), ScopeSelector: &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{ScopeName: "Terminating", Operator: "Exists"}, {ScopeName: "NotTerminating", Operator: "Exists"}}}},
		"requests over limits":    {Hard: list("requests.cpu", "2", "limits.cpu", "1", "requests.memory", "2Gi", "limits.memory", "1Gi", "requests.storage", "5Gi", "limits.storage", "1Gi", "requests.ephemeral-storage", "3Gi", "limits.ephemeral-storage", "1Gi")},
		"cpu over limits":         {Hard: list("cpu", "2", "limits.cpu", "1", "memory", "2Gi", "requests.memory", "1Gi", "limits.memory", "1500Mi")},
		"hugepages":               {Hard: list("hugepages-2Mi", "10Mi", "requests.hugepages-1Gi", "2Gi")},
	}
}

func limitItems() map[string][]corev1.LimitRangeItem {
	container := func(max, min, def, defReq, ratio corev1.ResourceList) corev1.LimitRangeItem {
		return corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: max, Min: min, Default: def, DefaultRequest: defReq, MaxLimitRequestRatio: ratio}
	}
	return map[string][]corev1.LimitRangeItem{
		"valid": {{Type: corev1.LimitTypePod, Max: list("cpu", "100m", "memory", "10000"), Min: list("cpu", "5m", "memory", "100"), MaxLimitRequestRatio: list("cpu", "10")},
			container(list("cpu", "100m"), list("cpu", "10m"), list("cpu", "75m"), list("cpu", "10m"), list("cpu", "20")),
			{Type: corev1.LimitTypePersistentVolumeClaim, Max: list("storage", "10Gi"), Min: list("storage", "5Gi")}},
		"pvc min only":            {{Type: corev1.LimitTypePersistentVolumeClaim, Min: list("storage", "5Gi")}},
		"pvc without storage":     {{Type: corev1.LimitTypePersistentVolumeClaim, Max: list("cpu", "1")}},
		"pod with defaults":       {{Type: corev1.LimitTypePod, Default: list("cpu", "1"), DefaultRequest: list("cpu", "1")}},
		"duplicate types":         {{Type: corev1.LimitTypePod}, {Type: corev1.LimitTypePod}},
		"min over max":            {container(list("cpu", "10m"), list("cpu", "100m"), nil, nil, nil)},
		"default request bounds":  {container(list("cpu", "1"), list("cpu", "500m"), list("cpu", "600m"), list("cpu", "2"), nil)},
		"default request low":     {container(nil, list("cpu", "500m"), nil, list("cpu", "100m"), nil)},
		"default outside bounds":  {container(list("cpu", "1"), list("cpu", "500m"), list("cpu", "100m"), nil, nil)},
		"default over max":        {container(list("cpu", "1"), nil, list("cpu", "2"), nil, nil)},
		"ratio below 1":           {container(nil, nil, nil, nil, list("cpu", "800m"))},
		"ratio over max/min":      {container(list("cpu", "1"), list("cpu", "500m"), nil, nil, list("cpu", "3"))},
		"ratio over max/min, big": {container(list("memory", "8Ei"), list("memory", "1Ei"), nil, nil, list("memory", "9"))},
		"ratio big, valid":        {container(list("memory", "8Ei"), list("memory", "1Ei"), nil, nil, list("memory", "8"))},
		"hugepages overcommit":    {container(nil, nil, list("hugepages-2Mi", "4Mi"), list("hugepages-2Mi", "2Mi"), nil)},
		"extended overcommit":     {container(nil, nil, list("example.com/gpu", "2"), list("example.com/gpu", "1"), nil)},
		"bad names":               {container(list("bad name", "1", "storage", "1"), nil, nil, nil, nil), {Type: "example.com/x", Max: list("example.com/thing", "1", "pods", "1")}},
		"bad type":                {{Type: "Volume"}, {Type: "bad type!"}, {Type: ""}},
	}
}

func revisionDataCases() map[string][]byte {
	return map[string][]byte{"object": []byte(`{"spec":{}}`), "missing": nil, "null": []byte("null"), "string": []byte(`"s"`),
		"array": []byte("[1,2]"), "broken": []byte("{"), "empty object": []byte("{}"), "number": []byte("1")}
}

func goodEvent() *corev1.Event {
	return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "test", Namespace: metav1.NamespaceSystem, ResourceVersion: "2"},
		InvolvedObject: corev1.ObjectReference{APIVersion: "v2", Kind: "Node"}, EventTime: metav1.NewMicroTime(time.Unix(100, 0)),
		ReportingController: "k8s.io/my-controller", ReportingInstance: "node-xyz", Action: "Do", Reason: "Yeees", Type: "Normal"}
}

func eventCases() map[string]func(ev *corev1.Event) {
	return map[string]func(ev *corev1.Event){
		"good":                           func(*corev1.Event) {},
		"no event time":                  func(ev *corev1.Event) { ev.EventTime = metav1.MicroTime{} },
		"no event time, other namespace": func(ev *corev1.Event) { ev.EventTime, ev.Namespace = metav1.MicroTime{}, "foo" },
		"no event time, default":         func(ev *corev1.Event) { ev.EventTime, ev.Namespace = metav1.MicroTime{}, "default" },
		"other namespace":                func(ev *corev1.Event) { ev.Namespace = "foo" },
		"matching namespace":             func(ev *corev1.Event) { ev.Namespace, ev.InvolvedObject.Namespace = "foo", "foo" },
		"nothing reported": func(ev *corev1.Event) {
			ev.ReportingController, ev.ReportingInstance, ev.Action, ev.Reason = "", "", "", ""
		},
		"too long": func(ev *corev1.Event) {
			ev.ReportingInstance, ev.Action, ev.Reason, ev.Message = strings.Repeat("i", 129), strings.Repeat("a", 129), strings.Repeat("r", 129), strings.Repeat("m", 1025)
		},
		"bad controller": func(ev *corev1.Event) { ev.ReportingController = "k8s.io/my controller" },
		"legacy fields": func(ev *corev1.Event) {
			ev.Source, ev.Count = corev1.EventSource{Host: "node"}, 3
			ev.FirstTimestamp, ev.LastTimestamp = metav1.NewTime(time.Unix(100, 0)), metav1.NewTime(time.Unix(200, 0))
		},
		"bad type":          func(ev *corev1.Event) { ev.Type = "Critical" },
		"series":            func(ev *corev1.Event) { ev.Series = &corev1.EventSeries{Count: 2, LastObservedTime: ev.EventTime} },
		"bad series":        func(ev *corev1.Event) { ev.Series = &corev1.EventSeries{Count: 1} },
		"bad name":          func(ev *corev1.Event) { ev.Name = "Bad_Name.1" },
		"bad name, invalid": func(ev *corev1.Event) { ev.Name, ev.Reason = "Bad_Name.1", "" },
		"finalizer":         func(ev *corev1.Event) { ev.Finalizers = []string{"cleanup"} },
	}
}

// eventTimeChanges are TestEventV1EventTimeImmutability's.
func eventTimeChanges() map[string][2]metav1.MicroTime {
	at := func(sec, nsec int64) metav1.MicroTime { return metav1.NewMicroTime(time.Unix(sec, nsec)) }
	return map[string][2]metav1.MicroTime{
		"noop microsecond precision": {at(100, 5000), at(100, 5000)}, "noop nanosecond precision": {at(100, 5), at(100, 5)},
		"nanoseconds within the microsecond": {at(100, 5), at(100, 6)}, "microseconds": {at(100, 5000), at(100, 4999)},
		"seconds": {at(100, 0), at(101, 0)},
	}
}

func TestUpstreamTables(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	both := func(name string, obj runtime.Object) {
		for _, defaulted := range []bool{false, true} {
			compare(t, cat, write{Name: fmt.Sprintf("%s (defaulted %v)", name, defaulted), Obj: obj, Defaulted: defaulted}, &c)
		}
	}
	update := func(name string, obj, old runtime.Object, status bool) {
		compare(t, cat, write{Name: name, Obj: obj, Old: old, Status: status, Defaulted: true}, &c)
	}
	for name, spec := range quotaSpecs() {
		q := &corev1.ResourceQuota{ObjectMeta: objMeta("quota"), Spec: spec}
		both("quota "+name, q)
		old := q.DeepCopy()
		old.Spec.Scopes = nil
		update("quota update from unscoped: "+name, q, old, false)
		withStatus := q.DeepCopy()
		withStatus.Status = corev1.ResourceQuotaStatus{Hard: spec.Hard, Used: spec.Hard}
		update("quota status: "+name, withStatus, q, true)
		withStatus.ResourceVersion = ""
		update("quota status without resourceVersion: "+name, withStatus, q, true)
	}
	reordered := &corev1.ResourceQuota{ObjectMeta: objMeta("quota"), Spec: quotaSpecs()["conflicting"]}
	old := reordered.DeepCopy()
	old.Spec.Scopes = []corev1.ResourceQuotaScope{"NotTerminating", "Terminating", "NotBestEffort", "BestEffort", "BestEffort"}
	update("quota scopes reordered", reordered, old, false)
	for name, items := range limitItems() {
		lr := &corev1.LimitRange{ObjectMeta: objMeta("limits"), Spec: corev1.LimitRangeSpec{Limits: items}}
		both("limitrange "+name, lr)
		update("limitrange update: "+name, lr, &corev1.LimitRange{ObjectMeta: objMeta("limits")}, false)
	}
	both("limitrange without a name", &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: "default"}})
	for name, data := range revisionDataCases() {
		for _, revision := range []int64{0, 3, -1} {
			cr := &appsv1.ControllerRevision{ObjectMeta: objMeta("web-1"), Data: runtime.RawExtension{Raw: data}, Revision: revision}
			both(fmt.Sprintf("revision %s %d", name, revision), cr)
			was := &appsv1.ControllerRevision{ObjectMeta: objMeta("web-1"), Data: runtime.RawExtension{Raw: []byte(`{"spec":{}}`)}, Revision: 1}
			update(fmt.Sprintf("revision update: %s %d", name, revision), cr, was, false)
		}
	}
	for name, change := range eventCases() {
		ev := goodEvent()
		change(ev)
		both("event "+name, ev)
		both("events.k8s.io event "+name, eventsV1Of(ev))
		update("event update: "+name, ev, goodEvent(), false)
		update("events.k8s.io event update: "+name, eventsV1Of(ev), eventsV1Of(goodEvent()), false)
	}
	for name, times := range eventTimeChanges() {
		old := goodEvent()
		old.EventTime, old.Series = times[0], &corev1.EventSeries{Count: 2, LastObservedTime: times[0]}
		ev := old.DeepCopy()
		ev.EventTime = times[1]
		update("events.k8s.io eventTime: "+name, eventsV1Of(ev), eventsV1Of(old), false)
		update("event eventTime: "+name, ev, old, false)
	}
	t.Log(c.String())
}
