package lint

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"
)

// probeResult is what one TLS handshake with a webhook showed.
type probeResult struct {
	leaf      *x509.Certificate
	verifyErr error
	dialErr   error
}

// probeHooks connects to every URL webhook once per address and caBundle,
// and reports certificates that do not verify or expire soon. Service
// webhooks are reported as not probed.
func probeHooks(ctx context.Context, hooks []hook, o Options) []Finding {
	results := map[string]probeResult{}
	var out []Finding
	for i := range hooks {
		h := &hooks[i]
		if h.client.URL == nil {
			out = append(out, h.finding(NotProbed, Info, h.field("clientConfig.service"),
				fmt.Sprintf("webhook %q is reached through a service; its certificate was not checked", h.name)))
			continue
		}
		u, err := url.Parse(*h.client.URL)
		if err != nil || u.Hostname() == "" {
			out = append(out, h.finding(ProbeFailed, h.riskSeverity(), h.field("clientConfig.url"),
				fmt.Sprintf("webhook %q has an unusable URL %q", h.name, *h.client.URL)))
			continue
		}
		key := u.Host + "\x00" + string(h.client.CABundle)
		r, ok := results[key]
		if !ok {
			r = probeTLS(ctx, u, h.client.CABundle, o)
			results[key] = r
		}
		out = append(out, probeFindings(h, u, r, o)...)
	}
	return out
}

func probeFindings(h *hook, u *url.URL, r probeResult, o Options) []Finding {
	if r.dialErr != nil {
		return []Finding{h.finding(ProbeFailed, h.riskSeverity(), h.field("clientConfig.url"),
			fmt.Sprintf("webhook %q: TLS handshake with %s failed: %v", h.name, u.Host, r.dialErr))}
	}
	var out []Finding
	if r.verifyErr != nil {
		out = append(out, h.finding(CABundleMismatch, h.riskSeverity(), h.field("clientConfig.caBundle"),
			fmt.Sprintf("webhook %q: the certificate of %s does not verify with the caBundle: %v", h.name, u.Host, r.verifyErr)))
	}
	now := o.Now()
	switch left := r.leaf.NotAfter.Sub(now); {
	case left <= 0:
		out = append(out, h.finding(CertificateExpiring, Error, h.field("clientConfig.url"),
			fmt.Sprintf("webhook %q: the certificate of %s expired on %s", h.name, u.Host, r.leaf.NotAfter.UTC().Format(time.RFC3339))))
	case left < o.ExpiryWarning:
		out = append(out, h.finding(CertificateExpiring, Warning, h.field("clientConfig.url"),
			fmt.Sprintf("webhook %q: the certificate of %s expires on %s, in %d days", h.name, u.Host,
				r.leaf.NotAfter.UTC().Format(time.RFC3339), int(left.Hours()/24))))
	}
	return out
}

// probeTLS completes a handshake without verification, then verifies the
// chain the server sent as the API server would: against caBundle (the
// system roots when it is empty), for the URL's host.
func probeTLS(ctx context.Context, u *url.URL, caBundle []byte, o Options) probeResult {
	host := u.Hostname()
	port := u.Port()
	if port == "" {
		port = "443"
	}
	ctx, cancel := context.WithTimeout(ctx, o.ProbeTimeout)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{ServerName: host, InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}} // #nosec G402 -- verified below
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		return probeResult{dialErr: err}
	}
	defer conn.Close()
	certs := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return probeResult{dialErr: errors.New("no certificate presented")}
	}
	opts := x509.VerifyOptions{DNSName: host, Intermediates: x509.NewCertPool(), CurrentTime: o.Now()}
	if len(caBundle) > 0 {
		opts.Roots = x509.NewCertPool()
		if !opts.Roots.AppendCertsFromPEM(caBundle) {
			return probeResult{leaf: certs[0], verifyErr: errors.New("caBundle holds no PEM certificate")}
		}
	}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	_, err = certs[0].Verify(opts)
	var invalid x509.CertificateInvalidError
	if errors.As(err, &invalid) && invalid.Reason == x509.Expired {
		err = nil // reported as expired, not as a caBundle problem
	}
	return probeResult{leaf: certs[0], verifyErr: err}
}
