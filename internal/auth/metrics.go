package auth

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
)

// DecisionMetrics counts terminal decisions as kube-apiserver's
// apiserver_authorization_decisions_total{type,name,decision}.
type DecisionMetrics struct {
	decisions *prometheus.CounterVec
}

// NewDecisionMetrics registers the counter on reg.
func NewDecisionMetrics(reg prometheus.Registerer) *DecisionMetrics {
	m := &DecisionMetrics{decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "apiserver", Subsystem: "authorization", Name: "decisions_total",
		Help: "[ALPHA] Total number of terminal decisions made by an authorizer split by authorizer type, name, and decision.",
	}, []string{"type", "name", "decision"})}
	reg.MustRegister(m.decisions)
	return m
}

// Instrument returns n whose allows and denies are counted (its rules, if
// it lists them, still listed) (as "allowed"
// and "denied", the field names of a SubjectAccessReview's status); no
// opinion is not a terminal decision and is not counted. A nil m counts
// nothing.
func (m *DecisionMetrics) Instrument(n Named) Named {
	if m == nil {
		return n
	}
	inner := n.Authorizer
	if r, ok := inner.(RulesReviewer); ok && n.Rules == nil {
		n.Rules = r
	}
	n.Authorizer = AuthorizerFunc(func(ctx context.Context, a Attributes) (Decision, string, error) {
		d, reason, err := inner.Authorize(ctx, a)
		switch d {
		case DecisionAllow:
			m.decisions.WithLabelValues(n.Type, n.Name, "allowed").Inc()
		case DecisionDeny:
			m.decisions.WithLabelValues(n.Type, n.Name, "denied").Inc()
		}
		return d, reason, err
	})
	return n
}
