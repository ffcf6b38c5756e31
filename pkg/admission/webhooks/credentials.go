package webhooks

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	"k8s.io/client-go/pkg/apis/clientauthentication"
	"k8s.io/client-go/plugin/pkg/client/auth/exec"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/transport"
)

// credentials chooses, for a webhook's host:port, the user entry of the
// kubeconfig named in the plugin configuration, as upstream does.
type credentials struct {
	config *clientcmdapi.Config
}

func loadCredentials(path string) (*credentials, error) {
	if path == "" {
		return &credentials{}, nil
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, err
	}
	return &credentials{config: cfg}, nil
}

// userFor returns the user entry for target ("host:port"), or nil for
// anonymous.
func (c *credentials) userFor(target string) *clientcmdapi.AuthInfo {
	if c.config == nil {
		return nil
	}
	users := c.config.AuthInfos
	for _, name := range candidateNames(target) {
		if u, ok := users[name]; ok {
			return u
		}
	}
	if u, ok := users["*"]; ok {
		return u
	}
	if ctx, ok := c.config.Contexts[c.config.CurrentContext]; ok {
		if u, ok := users[ctx.AuthInfo]; ok {
			return u
		}
	}
	return nil
}

// candidateNames lists the user names tried for target, most specific
// first: the exact name, then wildcard suffixes; for port 443 the same
// again without the port.
func candidateNames(target string) []string {
	names := wildcards(target)
	if host, port, err := net.SplitHostPort(target); err == nil && port == "443" {
		names = append(names, wildcards(host)...)
	}
	return names
}

func wildcards(name string) []string {
	out := []string{name}
	labels := strings.Split(name, ".")
	for i := 1; i < len(labels); i++ {
		out = append(out, "*."+strings.Join(labels[i:], "."))
	}
	return out
}

// applyUser adds a user entry's credentials to a client: client
// certificates, bearer token, basic auth, an exec credential plugin and
// impersonation. cluster describes the webhook, for exec plugins that ask
// for it (provideClusterInfo).
func applyUser(u *clientcmdapi.AuthInfo, tr *http.Transport, cluster *clientauthentication.Cluster) (http.RoundTripper, error) {
	if u == nil {
		return tr, nil
	}
	if u.AuthProvider != nil {
		return nil, errors.New("auth provider not supported")
	}
	if err := applyClientCert(u, tr); err != nil {
		return nil, err
	}
	next := http.RoundTripper(tr)
	if u.Exec != nil && !hasStaticCredentials(u) {
		var err error
		if next, err = applyExec(u.Exec, tr, cluster); err != nil {
			return nil, err
		}
	}
	token := u.Token
	if token == "" && u.TokenFile != "" {
		b, err := os.ReadFile(u.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("reading token file: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	return &credentialRoundTripper{next: next, user: u, token: token}, nil
}

// hasStaticCredentials reports whether a user entry carries a token, basic
// auth or a client certificate, which take precedence over its exec plugin
// (as in client-go).
func hasStaticCredentials(u *clientcmdapi.AuthInfo) bool {
	return u.Token != "" || u.TokenFile != "" || u.Username != "" || u.Password != "" ||
		len(u.ClientCertificateData) > 0 || u.ClientCertificate != ""
}

// applyExec runs client-go's exec credential plugin support: the plugin's
// token goes on every request (refreshed when it expires or is refused),
// its client certificate, if any, is presented in the TLS handshake.
func applyExec(cfg *clientcmdapi.ExecConfig, tr *http.Transport, cluster *clientauthentication.Cluster) (http.RoundTripper, error) {
	if !cfg.ProvideClusterInfo {
		cluster = nil
	}
	a, err := exec.GetAuthenticator(cfg, cluster)
	if err != nil {
		return nil, err
	}
	var tc transport.Config
	if err := a.UpdateTransportConfig(&tc); err != nil {
		return nil, err
	}
	if h := tc.TLS.GetCertHolder; h != nil && h.GetCert != nil {
		tr.TLSClientConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cert, err := h.GetCert()
			if cert == nil {
				cert = &tls.Certificate{} // no certificate: send none
			}
			return cert, err
		}
	}
	return tc.WrapTransport(tr), nil
}

func applyClientCert(u *clientcmdapi.AuthInfo, tr *http.Transport) error {
	certPEM, keyPEM := u.ClientCertificateData, u.ClientKeyData
	var err error
	if len(certPEM) == 0 && u.ClientCertificate != "" {
		if certPEM, err = os.ReadFile(u.ClientCertificate); err != nil {
			return err
		}
	}
	if len(keyPEM) == 0 && u.ClientKey != "" {
		if keyPEM, err = os.ReadFile(u.ClientKey); err != nil {
			return err
		}
	}
	if len(certPEM) == 0 && len(keyPEM) == 0 {
		return nil
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return err
	}
	tr.TLSClientConfig.Certificates = append(tr.TLSClientConfig.Certificates, cert)
	return nil
}

// credentialRoundTripper sets the authentication headers of a user entry.
type credentialRoundTripper struct {
	next  http.RoundTripper
	user  *clientcmdapi.AuthInfo
	token string
}

func (c *credentialRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	switch {
	case c.token != "":
		r.Header.Set("Authorization", "Bearer "+c.token)
	case c.user.Username != "" || c.user.Password != "":
		r.SetBasicAuth(c.user.Username, c.user.Password)
	}
	if c.user.Impersonate != "" {
		r.Header.Set("Impersonate-User", c.user.Impersonate)
		if c.user.ImpersonateUID != "" {
			r.Header.Set("Impersonate-Uid", c.user.ImpersonateUID)
		}
		for _, g := range c.user.ImpersonateGroups {
			r.Header.Add("Impersonate-Group", g)
		}
		for k, vs := range c.user.ImpersonateUserExtra {
			for _, v := range vs {
				r.Header.Add("Impersonate-Extra-"+k, v)
			}
		}
	}
	return c.next.RoundTrip(r)
}
