package imagepolicywebhook_test

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	"github.com/admitd/admitd/pkg/admission/plugins/imagepolicywebhook"
	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

// answer is what the test backend replies to one review.
type answer struct {
	code        int // HTTP status; 0 is 200
	allowed     bool
	reason      string
	annotations map[string]string
	delay       time.Duration
}

// backend is a real HTTPS image policy backend on 127.0.0.1 that requires
// a client certificate from its CA. It answers from a script (the last
// answer repeats) and records the bodies it receives.
type backend struct {
	*webhooktest.Server
	mu      sync.Mutex
	script  []answer
	decide  func(imagepolicyv1alpha1.ImageReview) answer // used when set
	bodies  [][]byte
	reviews []imagepolicyv1alpha1.ImageReview
}

func newBackend(t *testing.T) *backend {
	t.Helper()
	b := &backend{}
	s, err := webhooktest.NewUnstartedServer(nil, http.HandlerFunc(b.serve))
	if err != nil {
		t.Fatal(err)
	}
	s.TLS.ClientCAs = s.CA.Pool()
	s.TLS.ClientAuth = tls.RequireAndVerifyClientCert
	s.StartTLS()
	t.Cleanup(s.Close)
	b.Server = s
	return b
}

// answers sets the script and forgets earlier calls.
func (b *backend) answers(as ...answer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.script, b.bodies, b.reviews = as, nil, nil
}

func (b *backend) calls() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.bodies)
}

func (b *backend) lastReview() imagepolicyv1alpha1.ImageReview {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reviews[len(b.reviews)-1]
}

func (b *backend) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var rev imagepolicyv1alpha1.ImageReview
	_ = json.Unmarshal(body, &rev)
	b.mu.Lock()
	n := len(b.bodies)
	b.bodies = append(b.bodies, body)
	b.reviews = append(b.reviews, rev)
	a := answer{allowed: true}
	switch {
	case b.decide != nil:
		a = b.decide(rev)
	case len(b.script) > 0:
		a = b.script[min(n, len(b.script)-1)]
	}
	b.mu.Unlock()
	time.Sleep(a.delay)
	if a.code != 0 && a.code != http.StatusOK {
		http.Error(w, "backend failure", a.code)
		return
	}
	rev.Status = imagepolicyv1alpha1.ImageReviewStatus{Allowed: a.allowed, Reason: a.reason, AuditAnnotations: a.annotations}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(rev)
}

// kubeconfig writes a kubeconfig for the backend: the CA that trusts it
// (nil: none) and a client certificate from its CA (when withCert).
func (b *backend) kubeconfig(t *testing.T, caPEM []byte, withCert bool) string {
	t.Helper()
	user := &clientcmdapi.AuthInfo{}
	if withCert {
		cert, key, err := b.CA.IssueClientPEM("kube-apiserver")
		if err != nil {
			t.Fatal(err)
		}
		user.ClientCertificateData, user.ClientKeyData = cert, key
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["policy"] = &clientcmdapi.Cluster{Server: b.URL + "/review", CertificateAuthorityData: caPEM}
	cfg.AuthInfos["apiserver"] = user
	cfg.Contexts["default"] = &clientcmdapi.Context{Cluster: "policy", AuthInfo: "apiserver"}
	cfg.CurrentContext = "default"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// plugin builds the plugin through its registration, from the
// configuration file text (%s is replaced by the kubeconfig path).
func plugin(t *testing.T, config, kubeconfig string) *imagepolicywebhook.Plugin {
	t.Helper()
	h, err := build(strings.ReplaceAll(config, "KUBECONFIG", kubeconfig))
	if err != nil {
		t.Fatalf("building the plugin: %v", err)
	}
	return h.(*imagepolicywebhook.Plugin)
}

func build(config string) (admission.Handler, error) {
	r := admission.NewRegistry()
	imagepolicywebhook.Register(r)
	var cfg io.Reader
	if config != "" {
		cfg = strings.NewReader(config)
	}
	c, err := r.NewChain([]string{imagepolicywebhook.Name}, admission.PluginContext{}, func(string) io.Reader { return cfg })
	if err != nil {
		return nil, err
	}
	return c.Plugins()[0].Plugin, nil
}

// config is a configuration that retries quickly and caches for a minute.
const config = `imagePolicy:
  kubeConfigFile: KUBECONFIG
  allowTTL: 60
  denyTTL: 60
  retryBackoff: 1
  defaultAllow: false
`

func pod(name string, images ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"}}
	for _, img := range images {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "c", Image: img})
	}
	return p
}

func createAttrs(p *corev1.Pod) *admission.Attributes {
	return admissiontest.Create(p).Attributes()
}

func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
