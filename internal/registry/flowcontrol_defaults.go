package registry

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/utils/ptr"
)

// The decoding defaults of flowcontrol.apiserver.k8s.io/v1, as upstream's
// pkg/apis/flowcontrol/v1/defaults.go: a FlowSchema matches at precedence
// 1000 unless told otherwise; a limited priority level has 30 nominal
// shares and lends nothing, and queues requests in 64 queues of 50 with
// hands of 8; an exempt one has no shares and lends nothing.

const (
	defaultMatchingPrecedence       int32 = 1000
	defaultNominalConcurrencyShares int32 = 30
	defaultQueues                   int32 = 64
	defaultHandSize                 int32 = 8
	defaultQueueLengthLimit         int32 = 50
)

func defaultFlowSchema(fs *flowcontrolv1.FlowSchema) {
	if fs.Spec.MatchingPrecedence == 0 {
		fs.Spec.MatchingPrecedence = defaultMatchingPrecedence
	}
}

func defaultPriorityLevel(pl *flowcontrolv1.PriorityLevelConfiguration) {
	if l := pl.Spec.Limited; l != nil {
		if l.NominalConcurrencyShares == nil {
			l.NominalConcurrencyShares = ptr.To(defaultNominalConcurrencyShares)
		}
		if l.LendablePercent == nil {
			l.LendablePercent = ptr.To[int32](0)
		}
		if q := l.LimitResponse.Queuing; q != nil {
			orDefault(&q.HandSize, defaultHandSize)
			orDefault(&q.Queues, defaultQueues)
			orDefault(&q.QueueLengthLimit, defaultQueueLengthLimit)
		}
	}
	if e := pl.Spec.Exempt; e != nil {
		if e.NominalConcurrencyShares == nil {
			e.NominalConcurrencyShares = ptr.To[int32](0)
		}
		if e.LendablePercent == nil {
			e.LendablePercent = ptr.To[int32](0)
		}
	}
}

// orDefault sets *v to def when it is zero.
func orDefault(v *int32, def int32) {
	if *v == 0 {
		*v = def
	}
}
