package controllers

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
)

// ClusterAuthenticationTrust is kube-apiserver's
// cluster-authentication-trust-controller: the ConfigMap
// kube-system/extension-apiserver-authentication tells extension API
// servers whom to trust, the client CA (client-ca-file) and, with a
// front proxy, its CA (requestheader-client-ca-file) and headers
// (requestheader-username-headers, -uid-headers, -group-headers,
// -extra-headers-prefix, -allowed-names: JSON lists). Every server adds
// its own to what the ConfigMap holds (CAs and names without repeats,
// expired CAs dropped), so servers sharing storage publish the union. It
// syncs at start and every AuthenticationTrustSyncPeriod.
type ClusterAuthenticationTrust struct {
	client dynamic.ResourceInterface
	want   AuthenticationInfo
	log    *slog.Logger
}

// AuthenticationInfo is what one server trusts.
type AuthenticationInfo struct {
	// ClientCA is the PEM bundle of client certificate authorities.
	ClientCA []byte
	// RequestHeaderCA is the front-proxy CA bundle; empty without a front
	// proxy, when the requestheader keys are not written.
	RequestHeaderCA     []byte
	AllowedNames        []string
	UsernameHeaders     []string
	UIDHeaders          []string
	GroupHeaders        []string
	ExtraHeaderPrefixes []string
}

// AuthenticationTrustSyncPeriod is how often the ConfigMap is checked.
const AuthenticationTrustSyncPeriod = time.Minute

// The ConfigMap and its keys, as upstream's.
const (
	AuthenticationConfigMap = "extension-apiserver-authentication"
	clientCAKey             = "client-ca-file"
	requestHeaderCAKey      = "requestheader-client-ca-file"
)

// NewClusterAuthenticationTrust returns the controller publishing want,
// writing through rt (the loopback transport of the API server's user).
func NewClusterAuthenticationTrust(rt http.RoundTripper, want AuthenticationInfo, log *slog.Logger) (*ClusterAuthenticationTrust, error) {
	client, err := newAPIServerClient(rt)
	if err != nil {
		return nil, err
	}
	return &ClusterAuthenticationTrust{client: client.Resource(configMapsGVR).Namespace(metav1.NamespaceSystem), want: want, log: log}, nil
}

// Run syncs now and every AuthenticationTrustSyncPeriod until ctx ends.
func (c *ClusterAuthenticationTrust) Run(ctx context.Context) {
	t := time.NewTicker(AuthenticationTrustSyncPeriod)
	defer t.Stop()
	for {
		if err := c.Sync(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("publishing the authentication trust", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sync writes the union of the stored ConfigMap's trust and this
// server's, when it differs from what is stored.
func (c *ClusterAuthenticationTrust) Sync(ctx context.Context) error {
	u, err := c.client.Get(ctx, AuthenticationConfigMap, metav1.GetOptions{})
	found := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: AuthenticationConfigMap, Namespace: metav1.NamespaceSystem}}
	if found {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cm); err != nil {
			return err
		}
	}
	data, err := mergeAuthenticationData(cm.Data, c.want)
	if err != nil {
		return err
	}
	if found && maps.Equal(data, cm.Data) {
		return nil
	}
	cm.Data = data
	if !found {
		err := createTyped(ctx, c.client, cm)
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}
	return updateRead(ctx, c.client, cm)
}

// mergeAuthenticationData is upstream's combination of the stored data
// with a server's info, written back as the ConfigMap's data.
func mergeAuthenticationData(stored map[string]string, want AuthenticationInfo) (map[string]string, error) {
	var lists [5][]string
	keys := [5]string{"requestheader-allowed-names", "requestheader-username-headers", "requestheader-uid-headers",
		"requestheader-group-headers", "requestheader-extra-headers-prefix"}
	mine := [5][]string{want.AllowedNames, want.UsernameHeaders, want.UIDHeaders, want.GroupHeaders, want.ExtraHeaderPrefixes}
	for i, key := range keys {
		var have []string
		if v := stored[key]; v != "" {
			if err := json.Unmarshal([]byte(v), &have); err != nil {
				return nil, err
			}
		}
		lists[i] = unionStrings(have, mine[i])
	}
	data := map[string]string{}
	if ca := unionCAs([]byte(stored[clientCAKey]), want.ClientCA); len(ca) > 0 {
		data[clientCAKey] = string(ca)
	}
	ca := unionCAs([]byte(stored[requestHeaderCAKey]), want.RequestHeaderCA)
	if len(ca) == 0 {
		return data, nil
	}
	data[requestHeaderCAKey] = string(ca)
	for i, key := range keys {
		if key == "requestheader-uid-headers" && len(lists[i]) == 0 {
			continue
		}
		out, _ := json.Marshal(lists[i])
		data[key] = string(out)
	}
	return data, nil
}

func unionStrings(a, b []string) []string {
	out := []string{}
	for _, s := range slices.Concat(a, b) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// unionCAs is the certificates of both bundles, first seen first, without
// repeats or expired ones, PEM encoded.
func unionCAs(a, b []byte) []byte {
	var out bytes.Buffer
	var seen [][]byte
	now := time.Now()
	for _, bundle := range [][]byte{a, b} {
		for rest := bundle; ; {
			var block *pem.Block
			if block, rest = pem.Decode(rest); block == nil {
				break
			}
			cert, err := x509.ParseCertificate(block.Bytes)
			if block.Type != "CERTIFICATE" || err != nil || now.After(cert.NotAfter) ||
				slices.ContainsFunc(seen, func(raw []byte) bool { return bytes.Equal(raw, cert.Raw) }) {
				continue
			}
			seen = append(seen, cert.Raw)
			_ = pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
		}
	}
	return out.Bytes()
}
