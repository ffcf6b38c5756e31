package server

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"reflect"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/admitd/admitd/internal/pki"
)

// TestFrontProxyAuthentication: by default the server makes a front-proxy
// CA and client certificate, publishes them in
// kube-system/extension-apiserver-authentication with kubeadm's header
// settings, and trusts that certificate to assert a user in X-Remote-*
// headers; the admin's certificate (client CA) asserts nothing with them.
func TestFrontProxyAuthentication(t *testing.T) {
	o := testOptions(t)
	s, admin := startWith(t, o)
	fp, err := pki.EnsureFrontProxy(filepath.Join(o.DataDir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	who := func(certPEM, keyPEM []byte) authenticationv1.UserInfo {
		t.Helper()
		cfg := &rest.Config{Host: s.URL, TLSClientConfig: rest.TLSClientConfig{CAData: s.CAPEM, CertData: certPEM, KeyData: keyPEM},
			WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
				return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
					r.Header.Set("X-Remote-User", "jane")
					r.Header.Add("X-Remote-Group", "devs")
					r.Header.Set("X-Remote-Extra-Scopes", "read")
					return rt.RoundTrip(r)
				})
			}}
		review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(context.Background(),
			&authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return review.Status.UserInfo
	}
	got := who(fp.ClientCertPEM, fp.ClientKeyPEM)
	want := authenticationv1.UserInfo{Username: "jane", Groups: []string{"devs", "system:authenticated"},
		Extra: map[string]authenticationv1.ExtraValue{"scopes": {"read"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("front proxy's user = %+v, want %+v", got, want)
	}
	if got := who(s.AdminCertPEM, s.AdminKeyPEM); got.Username != pki.AdminUser {
		t.Errorf("admin certificate with X-Remote-User = %q, want %s (headers not trusted)", got.Username, pki.AdminUser)
	}

	cm, err := kubernetes.NewForConfigOrDie(admin).CoreV1().ConfigMaps("kube-system").Get(context.Background(), "extension-apiserver-authentication", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	_ = json.Unmarshal([]byte(cm.Data["requestheader-allowed-names"]), &names)
	if cm.Data["client-ca-file"] != string(s.CAPEM) || cm.Data["requestheader-client-ca-file"] != string(fp.CA.CertPEM) ||
		!reflect.DeepEqual(names, []string{"front-proxy-client"}) || cm.Data["requestheader-username-headers"] != `["X-Remote-User"]` ||
		cm.Data["requestheader-group-headers"] != `["X-Remote-Group"]` || cm.Data["requestheader-extra-headers-prefix"] != `["X-Remote-Extra-"]` {
		t.Errorf("extension-apiserver-authentication = %v", cm.Data)
	}
}
