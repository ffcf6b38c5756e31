package auth

import (
	"crypto/x509"

	"github.com/prometheus/client_golang/prometheus"
)

// benchX509 is the authenticator as the server sets it up: counting the
// lifetimes of the certificates presented.
func benchX509(pool *x509.CertPool) *X509Authenticator {
	return NewX509(pool).CountLifetimes(NewAuthenticationMetrics(prometheus.NewRegistry()))
}
