package aggregator

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/pki"
)

// stored holds APIServices, Services and EndpointSlices as the server's
// caches would; tests change them under update (checks may still be
// reading from earlier attempts).
type stored struct {
	mu          sync.Mutex
	apiServices map[string]*apiregistrationv1.APIService
	services    map[string]*corev1.Service
	slices      map[string][]*discoveryv1.EndpointSlice
}

func newStored() *stored {
	return &stored{apiServices: map[string]*apiregistrationv1.APIService{}, services: map[string]*corev1.Service{}, slices: map[string][]*discoveryv1.EndpointSlice{}}
}

// update changes the stored objects.
func (s *stored) update(change func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	change()
}

func (s *stored) Get(_ context.Context, _, name string) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.apiServices[name]; ok {
		return a.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "apiregistration.k8s.io", Resource: "apiservices"}, name)
}

func (s *stored) List(context.Context, string, labels.Selector) ([]runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []runtime.Object
	for _, a := range s.apiServices {
		out = append(out, a.DeepCopy())
	}
	return out, nil
}

func (s *stored) GetService(_ context.Context, namespace, name string) (*corev1.Service, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if svc, ok := s.services[namespace+"/"+name]; ok {
		return svc.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, name)
}

func (s *stored) EndpointSlices(_ context.Context, namespace, service string) ([]*discoveryv1.EndpointSlice, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*discoveryv1.EndpointSlice
	for _, es := range s.slices[namespace+"/"+service] {
		out = append(out, es.DeepCopy())
	}
	return out, nil
}

// backend is an extension API server on 127.0.0.1 with a certificate for
// api.wardle.svc, trusting the front-proxy CA for client certificates.
type backend struct {
	srv      *httptest.Server
	caBundle []byte
	requests chan *http.Request
}

func newBackend(t *testing.T, proxyCA *pki.CA, handler http.HandlerFunc) *backend {
	t.Helper()
	ca, err := pki.NewCA("wardle-ca")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.IssueServing([]string{"api.wardle.svc"})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{caBundle: ca.CertPEM, requests: make(chan *http.Request, 100)}
	b.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.requests <- r
		handler(w, r)
	}))
	b.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: proxyCA.Pool()}
	b.srv.StartTLS()
	t.Cleanup(b.srv.Close)
	return b
}

func (b *backend) port(t *testing.T) int32 {
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(b.srv.URL, "https://"))
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return int32(p)
}

// wardle registers the backend as v1alpha1.wardle.example.com behind
// Service wardle/api (cluster IP 127.0.0.1) with a ready endpoint.
func wardle(t *testing.T, st *stored, b *backend, available bool) *apiregistrationv1.APIService {
	port := b.port(t)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.services["wardle/api"] = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "wardle", Name: "api"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "127.0.0.1", Ports: []corev1.ServicePort{{Port: port}}}}
	st.slices["wardle/api"] = []*discoveryv1.EndpointSlice{{ObjectMeta: metav1.ObjectMeta{Namespace: "wardle", Name: "api-1"},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To(""), Port: &port}}}}
	s := &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1alpha1.wardle.example.com", ResourceVersion: "1"},
		Spec: apiregistrationv1.APIServiceSpec{Group: "wardle.example.com", Version: "v1alpha1", GroupPriorityMinimum: 1000, VersionPriority: 15,
			Service: &apiregistrationv1.ServiceReference{Namespace: "wardle", Name: "api", Port: &port}, CABundle: b.caBundle}}
	if available {
		s.Status.Conditions = []apiregistrationv1.APIServiceCondition{{Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue}}
	}
	st.apiServices[s.Name] = s
	return s
}

func newProxyIdentity(t *testing.T) (*pki.CA, *tls.Certificate) {
	t.Helper()
	ca, err := pki.NewCA("front-proxy-ca")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.IssueClient("front-proxy-client", nil)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return ca, &cert
}

func clientCertName(r *http.Request) string {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return ""
	}
	return r.TLS.PeerCertificates[0].Subject.CommonName
}
