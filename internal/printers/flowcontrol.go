package printers

import (
	"cmp"
	"slices"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The API Priority and Fairness tables, as upstream's printFlowSchema and
// printPriorityLevelConfiguration. Every column but Name is typed
// "string", numbers included, as upstream declares them.

var flowSchemaPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("PriorityLevel", flowcontrolv1.PriorityLevelConfigurationReference{}.SwaggerDoc()["name"]),
	str("MatchingPrecedence", flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["matchingPrecedence"]),
	str("DistinguisherMethod", flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["distinguisherMethod"]),
	ageColumn,
	str("MissingPL", "references a broken or non-existent PriorityLevelConfiguration"),
}, func(fs *flowcontrolv1.FlowSchema, now time.Time) []any {
	method := "<none>"
	if fs.Spec.DistinguisherMethod != nil {
		method = string(fs.Spec.DistinguisherMethod.Type)
	}
	missing := "?"
	for _, c := range fs.Status.Conditions {
		if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
			missing = string(c.Status)
			break
		}
	}
	return []any{fs.Name, fs.Spec.PriorityLevelConfiguration.Name, int64(fs.Spec.MatchingPrecedence), method,
		since(fs.CreationTimestamp, now), missing}
}).then(byMatchingOrder)

// byMatchingOrder sorts a list's rows in the order schemas match requests:
// by matching precedence, then by name.
func byMatchingOrder(rows []metav1.TableRow, _ []runtime.Object) {
	key := func(r metav1.TableRow) (int64, string) {
		precedence, _ := r.Cells[2].(int64)
		name, _ := r.Cells[0].(string)
		return precedence, name
	}
	slices.SortStableFunc(rows, func(a, b metav1.TableRow) int {
		pa, na := key(a)
		pb, nb := key(b)
		return cmp.Or(cmp.Compare(pa, pb), cmp.Compare(na, nb))
	})
}

var priorityLevelPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Type", flowcontrolv1.PriorityLevelConfigurationSpec{}.SwaggerDoc()["type"]),
	str("NominalConcurrencyShares", flowcontrolv1.LimitedPriorityLevelConfiguration{}.SwaggerDoc()["nominalConcurrencyShares"]),
	str("Queues", flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queues"]),
	str("HandSize", flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["handSize"]),
	str("QueueLengthLimit", flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queueLengthLimit"]),
	ageColumn,
}, func(pl *flowcontrolv1.PriorityLevelConfiguration, now time.Time) []any {
	var shares, queues, hand, limit any = "<none>", "<none>", "<none>", "<none>"
	if l := pl.Spec.Limited; l != nil {
		shares = int64(deref(l.NominalConcurrencyShares))
		if q := l.LimitResponse.Queuing; q != nil {
			queues, hand, limit = int64(q.Queues), int64(q.HandSize), int64(q.QueueLengthLimit)
		}
	}
	return []any{pl.Name, string(pl.Spec.Type), shares, queues, hand, limit, since(pl.CreationTimestamp, now)}
})
