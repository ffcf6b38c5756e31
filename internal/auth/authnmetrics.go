package auth

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// AuthenticationResult is how an authentication attempt ended, as upstream
// labels it.
type AuthenticationResult int

const (
	// AuthenticationSuccess: a user was found.
	AuthenticationSuccess AuthenticationResult = iota
	// AuthenticationFailure: no authenticator found a user, and none
	// rejected a credential.
	AuthenticationFailure
	// AuthenticationError: a credential was presented and rejected.
	AuthenticationError
	authenticationResults
)

var authenticationResultLabels = [authenticationResults]string{"success", "failure", "error"}

// ResultOf is the result of an Authenticator's answer.
func ResultOf(ok bool, err error) AuthenticationResult {
	switch {
	case err != nil:
		return AuthenticationError
	case !ok:
		return AuthenticationFailure
	}
	return AuthenticationSuccess
}

// metricUsernames are the labels of authenticated_user_requests: the
// usernames upstream keeps as they are, then "email_id" for an address
// with "@" and "other" for anyone else.
var metricUsernames = [...]string{"admin", "client", "kube_proxy", "kubelet", "system:serviceaccount:kube-system:default",
	"email_id", "other"}

const (
	emailUsername = len(metricUsernames) - 2
	otherUsername = len(metricUsernames) - 1
)

// metricUsername is the index in metricUsernames of username's label.
func metricUsername(username string) int {
	for i, name := range metricUsernames[:emailUsername] {
		if username == name {
			return i
		}
	}
	if strings.Contains(username, "@") {
		return emailUsername
	}
	return otherUsername
}

// AuthenticationMetrics are kube-apiserver's authentication_attempts,
// authentication_duration_seconds, authenticated_user_requests and
// apiserver_client_certificate_expiration_seconds, with
// upstream's names, help texts, labels and buckets. A series appears once
// it is first counted, as upstream's do, and is then looked up without a
// map or a lock. A nil *AuthenticationMetrics counts nothing.
type AuthenticationMetrics struct {
	attempts *prometheus.CounterVec
	duration *prometheus.HistogramVec
	users    *prometheus.CounterVec
	// certLifetimes is apiserver_client_certificate_expiration_seconds.
	certLifetimes prometheus.Histogram

	mu           sync.Mutex // guards making a series
	resultSeries [authenticationResults]atomic.Pointer[attemptSeries]
	userSeries   [len(metricUsernames)]atomic.Pointer[prometheus.Counter]
}

type attemptSeries struct {
	attempts prometheus.Counter
	duration prometheus.Observer
}

// NewAuthenticationMetrics registers the series on reg.
func NewAuthenticationMetrics(reg prometheus.Registerer) *AuthenticationMetrics {
	m := &AuthenticationMetrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "authentication_attempts",
			Help: "[ALPHA] Counter of authenticated attempts."}, []string{"result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "authentication_duration_seconds",
			Help:    "[ALPHA] Authentication duration in seconds broken out by result.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15)}, []string{"result"}),
		users: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "authenticated_user_requests",
			Help: "[ALPHA] Counter of authenticated requests broken out by username."}, []string{"username"}),
	}
	m.certLifetimes = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "apiserver_client_certificate_expiration_seconds",
		Help:    "[ALPHA] Distribution of the remaining lifetime on the certificate used to authenticate a request.",
		Buckets: certLifetimeBuckets})
	reg.MustRegister(m.attempts, m.duration, m.users, m.certLifetimes)
	return m
}

// certLifetimeBuckets are upstream's: expired, then 30 minutes, 1, 2, 6
// and 12 hours, 1, 2 and 4 days, a week, 30, 90, 180 and 360 days.
var certLifetimeBuckets = []float64{0, 1800, 3600, 7200, 21600, 43200, 86400, 172800, 345600, 604800, 2592000, 7776000, 15552000, 31104000}

// ObserveClientCertificate notes the remaining lifetime of a client
// certificate a request presented, verified or not, as upstream's x509
// authenticator does before it verifies.
func (m *AuthenticationMetrics) ObserveClientCertificate(remaining time.Duration) {
	if m == nil {
		return
	}
	m.certLifetimes.Observe(remaining.Seconds())
}

// Observe counts an authentication attempt that took took and ended in
// result; on success, username is the user found.
func (m *AuthenticationMetrics) Observe(result AuthenticationResult, username string, took time.Duration) {
	if m == nil {
		return
	}
	s := m.resultSeries[result].Load()
	if s == nil {
		s = m.newAttemptSeries(result)
	}
	s.attempts.Inc()
	s.duration.Observe(took.Seconds())
	if result == AuthenticationSuccess {
		i := metricUsername(username)
		c := m.userSeries[i].Load()
		if c == nil {
			c = m.newUserSeries(i)
		}
		(*c).Inc()
	}
}

func (m *AuthenticationMetrics) newAttemptSeries(result AuthenticationResult) *attemptSeries {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.resultSeries[result].Load(); s != nil {
		return s
	}
	label := authenticationResultLabels[result]
	s := &attemptSeries{attempts: m.attempts.WithLabelValues(label), duration: m.duration.WithLabelValues(label)}
	m.resultSeries[result].Store(s)
	return s
}

func (m *AuthenticationMetrics) newUserSeries(i int) *prometheus.Counter {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.userSeries[i].Load(); c != nil {
		return c
	}
	c := m.users.WithLabelValues(metricUsernames[i])
	m.userSeries[i].Store(&c)
	return &c
}
