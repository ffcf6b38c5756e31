package printers

import (
	"math"
	"reflect"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

const flowcontrolGroup = "flowcontrol.apiserver.k8s.io"

func flowSchema(name string, precedence int32, method flowcontrolv1.FlowDistinguisherMethodType, conds ...flowcontrolv1.FlowSchemaCondition) *flowcontrolv1.FlowSchema {
	fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: created},
		Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "allee"},
			MatchingPrecedence: precedence},
		Status: flowcontrolv1.FlowSchemaStatus{Conditions: conds}}
	if method != "" {
		fs.Spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: method}
	}
	return fs
}

// TestFlowSchemaTable mirrors upstream's TestPrintFlowSchema, and the list
// printer's order (by matching precedence, then name).
func TestFlowSchemaTable(t *testing.T) {
	res := lookup(t, flowcontrolGroup, "v1", "flowschemas")
	dangling := func(status string) flowcontrolv1.FlowSchemaCondition {
		return flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionStatus(status)}
	}
	other := flowcontrolv1.FlowSchemaCondition{Type: "Other", Status: "False"}
	checkKind(t, res, []string{"Name", "PriorityLevel", "MatchingPrecedence", "DistinguisherMethod", "Age", "MissingPL"}, []cellCase{
		{name: "by user", obj: flowSchema("all-matcher", math.MaxInt32, flowcontrolv1.FlowDistinguisherMethodByUserType),
			cells: []any{"all-matcher", "allee", int64(math.MaxInt32), "ByUser", "5m", "?"}},
		{name: "dangling", obj: flowSchema("some-matcher", 0, flowcontrolv1.FlowDistinguisherMethodByNamespaceType, other, dangling("True")),
			cells: []any{"some-matcher", "allee", int64(0), "ByNamespace", "5m", "True"}},
		{name: "no method", obj: flowSchema("exempt", 0, "", dangling("False"), dangling("True")),
			cells: []any{"exempt", "allee", int64(0), "<none>", "5m", "False"}},
	})
	for _, c := range res.Subresources {
		if c.Name != "status" {
			t.Errorf("flowschemas subresource %q, want status only", c.Name)
		}
	}

	objs := []runtime.Object{flowSchema("b", 500, ""), flowSchema("z", 1, ""), flowSchema("a", 500, ""), flowSchema("m", 10000, "")}
	tbl := Table(res, objs, now, Options{})
	var names []any
	for _, r := range tbl.Rows {
		names = append(names, r.Cells[0])
	}
	if want := []any{"z", "a", "b", "m"}; !reflect.DeepEqual(names, want) {
		t.Errorf("Table(4 flowschemas) names = %q, want %q", names, want)
	}
}

// TestPriorityLevelTable mirrors upstream's
// TestPrintPriorityLevelConfiguration (upstream's cells are int32; both
// are the same JSON number).
func TestPriorityLevelTable(t *testing.T) {
	pl := func(name string, spec flowcontrolv1.PriorityLevelConfigurationSpec) *flowcontrolv1.PriorityLevelConfiguration {
		return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: ago(time.Hour)}, Spec: spec}
	}
	limited := func(shares *int32, q *flowcontrolv1.QueuingConfiguration) flowcontrolv1.PriorityLevelConfigurationSpec {
		lr := flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}
		if q != nil {
			lr = flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: q}
		}
		return flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: shares, LimitResponse: lr}}
	}
	checkKind(t, lookup(t, flowcontrolGroup, "v1", "prioritylevelconfigurations"),
		[]string{"Name", "Type", "NominalConcurrencyShares", "Queues", "HandSize", "QueueLengthLimit", "Age"}, []cellCase{
			{name: "exempt", obj: pl("unlimited", flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementExempt}),
				cells: []any{"unlimited", "Exempt", "<none>", "<none>", "<none>", "<none>", "60m"}},
			{name: "rejecting", obj: pl("unqueued", limited(ptr.To[int32](47), nil)),
				cells: []any{"unqueued", "Limited", int64(47), "<none>", "<none>", "<none>", "60m"}},
			{name: "queuing", obj: pl("queued", limited(ptr.To[int32](42), &flowcontrolv1.QueuingConfiguration{Queues: 8, HandSize: 3, QueueLengthLimit: 4})),
				cells: []any{"queued", "Limited", int64(42), int64(8), int64(3), int64(4), "60m"}},
			// Internally an unset share count is 0.
			{name: "no shares", obj: pl("unset", limited(nil, nil)),
				cells: []any{"unset", "Limited", int64(0), "<none>", "<none>", "<none>", "60m"}},
		})
}
