package auth

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// authorizationResults are upstream's result labels of an authorization
// attempt, by how it ended: allowed, failed, denied or left undecided.
var authorizationResults = [...]string{"allowed", "error", "denied", "no-opinion"}

// authorizationResult is the index in authorizationResults of how an
// attempt ended, in upstream's order: an allow wins over an error, an
// error over the decision.
func authorizationResult(d Decision, err error) int {
	switch {
	case d == DecisionAllow:
		return 0
	case err != nil:
		return 1
	case d == DecisionDeny:
		return 2
	}
	return 3
}

// AuthorizationAttempts are kube-apiserver's authorization_attempts_total
// and authorization_duration_seconds: the authorization filter's attempts,
// by result, with upstream's names, help texts, labels and buckets. A
// series appears once it is first counted and is then looked up without a
// map or a lock. A nil *AuthorizationAttempts counts nothing.
type AuthorizationAttempts struct {
	attempts *prometheus.CounterVec
	duration *prometheus.HistogramVec

	mu     sync.Mutex // guards making a series
	series [len(authorizationResults)]atomic.Pointer[attemptSeries]
}

// NewAuthorizationAttempts registers the series on reg.
func NewAuthorizationAttempts(reg prometheus.Registerer) *AuthorizationAttempts {
	m := &AuthorizationAttempts{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "authorization_attempts_total",
			Help: "[ALPHA] Counter of authorization attempts broken down by result. It can be either 'allowed', 'denied', 'no-opinion' or 'error'."},
			[]string{"result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "authorization_duration_seconds",
			Help:    "[ALPHA] Authorization duration in seconds broken out by result.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15)}, []string{"result"}),
	}
	reg.MustRegister(m.attempts, m.duration)
	return m
}

// Observe counts a request's authorization that took took and ended with
// decision d and err.
func (m *AuthorizationAttempts) Observe(d Decision, err error, took time.Duration) {
	if m == nil {
		return
	}
	i := authorizationResult(d, err)
	s := m.series[i].Load()
	if s == nil {
		s = m.newSeries(i)
	}
	s.attempts.Inc()
	s.duration.Observe(took.Seconds())
}

func (m *AuthorizationAttempts) newSeries(i int) *attemptSeries {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.series[i].Load(); s != nil {
		return s
	}
	label := authorizationResults[i]
	s := &attemptSeries{attempts: m.attempts.WithLabelValues(label), duration: m.duration.WithLabelValues(label)}
	m.series[i].Store(s)
	return s
}
