package imagepolicywebhook

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

// mock is upstream's mockService: allow or deny all, except that a review
// whose first image is "good" is allowed and one with a "bad" image
// denied; a denial says "not allowed". A non-2xx code answers every call.
func mock(allow bool, code int, out map[string]string) script {
	return func(_ int, rev imagepolicyv1alpha1.ImageReview) reply {
		if code < 200 || code >= 300 {
			return reply{code: code}
		}
		ok := allow
		if len(rev.Spec.Containers) > 0 && rev.Spec.Containers[0].Image == "good" {
			ok = true
		}
		for _, c := range rev.Spec.Containers {
			if c.Image == "bad" {
				ok = false
			}
		}
		rp := reply{allowed: ok, annotations: out}
		if !ok {
			rp.reason = "not allowed"
		}
		return rp
	}
}

// upstream's test pod.
func goodPod(image string) *corev1.Pod {
	return &corev1.Pod{Spec: corev1.PodSpec{ServiceAccountName: "default", SecurityContext: &corev1.PodSecurityContext{},
		Containers: []corev1.Container{{Image: image, SecurityContext: &corev1.SecurityContext{}}}}}
}

func create(obj *corev1.Pod) request {
	return request{op: admission.Create, resource: podsResource, namespace: "namespace", obj: obj}
}

// quick is upstream's test configuration with a 1ms backoff (upstream's
// tests wait the default 500ms between attempts).
func quick(ttl int64, defaultAllow bool) settings {
	return settings{allowTTL: ttl, denyTTL: ttl, retryBackoff: 1, defaultAllow: defaultAllow}
}

// TestNewFromConfig is upstream's table of kubeconfigs, plus
// configurations of every kind: both build, or both fail with the same
// error.
func TestNewFromConfig(t *testing.T) {
	dir := t.TempDir()
	ca, err := webhooktest.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := ca.IssueClientPEM("client")
	if err != nil {
		t.Fatal(err)
	}
	caFile := writeFile(t, dir, "ca.pem", string(ca.CertPEM))
	certFile := writeFile(t, dir, "clientcert.pem", string(cert))
	keyFile := writeFile(t, dir, "clientkey.pem", string(key))
	user := fmt.Sprintf("users:\n- name: a name\n  user:\n    client-certificate: %s\n    client-key: %s\n", certFile, keyFile)
	kubeconfigs := map[string]string{
		"a single cluster and single user": fmt.Sprintf("clusters:\n- cluster:\n    certificate-authority: %s\n    server: https://admission.example.com\n  name: foobar\n"+
			"users:\n- name: a cluster\n  user:\n    client-certificate: %s\n    client-key: %s\n", caFile, certFile, keyFile),
		"multiple clusters with no context": fmt.Sprintf("clusters:\n- cluster:\n    certificate-authority: %s\n    server: https://admission.example.com\n  name: foobar\n"+
			"- cluster:\n    certificate-authority: a bad certificate path\n    server: https://admission.example.com\n  name: barfoo\n", caFile) + user,
		"multiple clusters with a context": fmt.Sprintf("clusters:\n- cluster:\n    certificate-authority: a bad certificate path\n    server: https://admission.example.com\n  name: foobar\n"+
			"- cluster:\n    certificate-authority: %s\n    server: https://admission.example.com\n  name: barfoo\n", caFile) + user +
			"contexts:\n- name: default\n  context:\n    cluster: barfoo\n    user: a name\ncurrent-context: default\n",
		"cluster with bad certificate path specified": fmt.Sprintf("clusters:\n- cluster:\n    certificate-authority: a bad certificate path\n    server: https://admission.example.com\n  name: foobar\n"+
			"- cluster:\n    certificate-authority: %s\n    server: https://admission.example.com\n  name: barfoo\n", caFile) + user +
			"contexts:\n- name: default\n  context:\n    cluster: foobar\n    user: a name\ncurrent-context: default\n",
		"plain http server": "clusters:\n- cluster: {server: 'http://127.0.0.1:1'}\n  name: c\ncontexts:\n- name: d\n  context: {cluster: c}\ncurrent-context: d\n",
		"client key missing": fmt.Sprintf("clusters:\n- cluster: {server: 'https://127.0.0.1:1'}\n  name: c\nusers:\n- name: u\n  user: {client-certificate: %s}\n"+
			"contexts:\n- name: d\n  context: {cluster: c, user: u}\ncurrent-context: d\n", certFile),
		"not yaml": "clusters: [",
		"empty":    "",
	}
	good := writeFile(t, dir, "good.kubeconfig", kubeconfigs["multiple clusters with a context"])
	configs := map[string]string{
		"no kubeconfig file":          "imagePolicy: {kubeConfigFile: " + filepath(dir, "missing") + "}",
		"json":                        `{"imagePolicy": {"kubeConfigFile": "` + good + `", "allowTTL": 500, "denyTTL": 500, "retryBackoff": 500, "defaultAllow": true}}`,
		"embedded":                    "apiVersion: apiserver.config.k8s.io/v1\nkind: ImagePolicyWebhookConfiguration\nimagePolicy:\n  kubeConfigFile: " + good + "\n  extra: 1\n",
		"all defaults":                "imagePolicy: {kubeConfigFile: " + good + ", allowTTL: 0, denyTTL: 0, retryBackoff: 0}",
		"all disabled":                "imagePolicy: {kubeConfigFile: " + good + ", allowTTL: -1, denyTTL: -1, retryBackoff: -1}",
		"backoff too long":            "imagePolicy: {kubeConfigFile: " + good + ", retryBackoff: 300001}",
		"backoff negative":            "imagePolicy: {kubeConfigFile: " + good + ", retryBackoff: -2}",
		"allow TTL too long":          "imagePolicy: {kubeConfigFile: " + good + ", allowTTL: 1801}",
		"allow TTL longest":           "imagePolicy: {kubeConfigFile: " + good + ", allowTTL: 1800, denyTTL: 1800, retryBackoff: 300000}",
		"deny TTL negative":           "imagePolicy: {kubeConfigFile: " + good + ", denyTTL: -3}",
		"allow and deny wrong":        "imagePolicy: {kubeConfigFile: " + good + ", allowTTL: -3, denyTTL: -3}",
		"TTL overflows":               "imagePolicy: {kubeConfigFile: " + good + ", allowTTL: 9223372036854775807}",
		"fraction":                    "imagePolicy: {kubeConfigFile: " + good + ", allowTTL: 1.5}",
		"string":                      "imagePolicy: {kubeConfigFile: " + good + ", denyTTL: '30s'}",
		"defaultAllow not a bool":     "imagePolicy: {kubeConfigFile: " + good + ", defaultAllow: maybe}",
		"not yaml":                    "imagePolicy: [",
		"no imagePolicy":              "other: {}",
		"empty":                       "",
		"json then garbage":           `{"imagePolicy": {"kubeConfigFile": "` + good + `"}} garbage`,
		"imagePolicy a list":          "imagePolicy: [1, 2]",
		"kubeConfigFile not a string": "imagePolicy: {kubeConfigFile: [a]}",
	}
	for name, kc := range kubeconfigs {
		configs["kubeconfig: "+name] = "imagePolicy: {kubeConfigFile: " + writeFile(t, dir, strings.ReplaceAll(name, " ", "-"), kc) + ", allowTTL: 500, denyTTL: 500, retryBackoff: 500, defaultAllow: true}"
	}
	t.Setenv("KUBECONFIG", filepath(dir, "unset"))
	t.Setenv("HOME", dir)
	built := 0
	for name, config := range configs {
		_, upErr := upNew(config)
		_, ourErr := buildOurs(config)
		if normalizeTypeName(errText(upErr)) != errText(ourErr) {
			t.Errorf("%s:\n upstream %v\n admitd   %v", name, upErr, ourErr)
		}
		if upErr == nil {
			built++
		}
	}
	if built < 5 {
		t.Errorf("only %d configurations built", built)
	}
	_, upErr := upNewReader(nil)
	if _, ourErr := imagepolicywebhookLoadNil(); errText(upErr) != errText(ourErr) {
		t.Errorf("no configuration:\n upstream %v\n admitd   %v", upErr, ourErr)
	}
}

// normalizeTypeName names upstream's type of the file's top level as
// admitd's: the one known difference, in the error for an imagePolicy
// section that is not an object (Go's JSON error names the Go type).
func normalizeTypeName(s string) string {
	return strings.ReplaceAll(s, "Go struct field AdmissionConfig.imagePolicy of type imagepolicy.imagePolicyWebhookConfig",
		"Go struct field fileConfig.imagePolicy of type imagepolicywebhook.imagePolicyWebhookConfig")
}

// TestTLSConfig is upstream's table of TLS setups: an allow-all then a
// deny-all backend.
func TestTLSConfig(t *testing.T) {
	requiring := newBackend(t, true)
	open := newBackend(t, false)
	stranger, err := webhooktest.NewCA("stranger")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		b          *backend
		ca         []byte
		issuer     *webhooktest.CA
		wantsAllow bool
	}{
		{"TLS setup between client and server", requiring, requiring.CA.CertPEM, requiring.CA, true},
		{"Server does not require client auth", open, open.CA.CertPEM, nil, true},
		{"Server does not require client auth, client provides it", open, open.CA.CertPEM, open.CA, true},
		{"Client does not trust server", requiring, nil, requiring.CA, false},
		{"Server does not trust client", requiring, requiring.CA.CertPEM, stranger, false},
		{"Client trusts another CA", open, stranger.CertPEM, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newPair(t, quick(-1, false).config(tc.b.kubeconfig(t, tc.ca, tc.issuer)))
			r := create(goodPod("some-image"))
			if got := p.compare(t, tc.b, mock(true, 200, nil), r); (got.Err == "") != tc.wantsAllow {
				t.Errorf("allow all: upstream %+v", got)
			}
			if got := p.compare(t, tc.b, mock(false, 200, nil), r); got.Err == "" {
				t.Errorf("deny all: upstream admitted")
			}
		})
	}
}

// TestWebhookCache is upstream's: failures are not cached, answers are.
func TestWebhookCache(t *testing.T) {
	b := newBackend(t, true)
	p := newPair(t, quick(200, false).config(b.trusted(t)))
	steps := []struct {
		pod   string
		codes []int
	}{
		{"test", []int{500, 404, 403, 401, 200, 500}},
		{"test2", []int{500, 200, 500}},
	}
	for _, s := range steps {
		for i, code := range s.codes {
			got := p.compare(t, b, mock(true, code, nil), create(goodPod(s.pod)))
			t.Logf("%s #%d HTTP %d: %d calls, %q", s.pod, i, code, len(got.Sent), got.Err)
		}
	}
}

// TestContainerCombinations is upstream's table of containers, init and
// ephemeral containers, with and without the ephemeralcontainers
// subresource.
func TestContainerCombinations(t *testing.T) {
	c := func(image string) corev1.Container {
		return corev1.Container{Image: image, SecurityContext: &corev1.SecurityContext{}}
	}
	e := func(image string) corev1.EphemeralContainer {
		return corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Image: image, SecurityContext: &corev1.SecurityContext{}}}
	}
	pod := func(containers, inits []corev1.Container, ephemeral ...corev1.EphemeralContainer) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{ServiceAccountName: "default", SecurityContext: &corev1.PodSecurityContext{},
			Containers: containers, InitContainers: inits, EphemeralContainers: ephemeral}}
	}
	type cs = []corev1.Container
	cases := []struct {
		name        string
		pod         *corev1.Pod
		subresource string
		op          admission.Operation
	}{
		{"Single container allowed", goodPod("good"), "", admission.Create},
		{"Single container denied", goodPod("bad"), "", admission.Create},
		{"One good container, one bad", pod(cs{c("bad"), c("good")}, nil), "", admission.Create},
		{"Multiple good containers", pod(cs{c("good"), c("good")}, nil), "", admission.Create},
		{"Multiple bad containers", pod(cs{c("bad"), c("bad")}, nil), "", admission.Create},
		{"Good container, bad init container", pod(cs{c("good")}, cs{c("bad")}), "", admission.Create},
		{"Bad container, good init container", pod(cs{c("bad")}, cs{c("good")}), "", admission.Create},
		{"Good container, good init container", pod(cs{c("good")}, cs{c("good")}), "", admission.Create},
		{"bad ephemeral container, ephemeralcontainers", pod(cs{c("good")}, cs{c("good")}, e("bad")), "ephemeralcontainers", admission.Update},
		{"bad ephemeral container, main resource", pod(cs{c("good")}, cs{c("good")}, e("bad")), "", admission.Update},
		{"Bad container, good ephemeral container", pod(cs{c("bad")}, nil, e("good")), "ephemeralcontainers", admission.Update},
		{"Good ephemeral container", pod(nil, nil, e("good")), "ephemeralcontainers", admission.Update},
	}
	b := newBackend(t, true)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newPair(t, quick(0, false).config(b.trusted(t)))
			r := request{op: tc.op, resource: podsResource, subresource: tc.subresource, namespace: "namespace", obj: tc.pod}
			p.compare(t, b, mock(false, 200, nil), r)
		})
	}
}

// TestDefaultAllow is upstream's: a failing backend, open or closed.
func TestDefaultAllow(t *testing.T) {
	b := newBackend(t, true)
	for _, defaultAllow := range []bool{true, false} {
		for _, image := range []string{"good", "bad"} {
			p := newPair(t, quick(0, defaultAllow).config(b.trusted(t)))
			got := p.compare(t, b, mock(true, 500, nil), create(goodPod(image)))
			if (got.Err == "") != defaultAllow {
				t.Errorf("defaultAllow %v, %s: upstream %+v", defaultAllow, image, got)
			}
		}
	}
}

// TestAnnotationFiltering is upstream's: which pod annotations the review
// carries.
func TestAnnotationFiltering(t *testing.T) {
	b := newBackend(t, true)
	for _, annotations := range []map[string]string{
		{"test": "test", "another": "annotation", "": ""},
		{"my.image-policy.k8s.io/test": "test", "other.image-policy.k8s.io/test2": "annotation", "test": "test", "another": "another", "": ""},
	} {
		p := newPair(t, quick(0, true).config(b.trusted(t)))
		pd := goodPod("test")
		pd.Annotations = annotations
		p.compare(t, b, mock(true, 200, nil), create(pd))
	}
}

// TestReturnedAnnotationAdd is upstream's: the backend's audit
// annotations, on allowed and denied pods.
func TestReturnedAnnotationAdd(t *testing.T) {
	b := newBackend(t, true)
	cases := []struct {
		image string
		out   map[string]string
	}{
		{"good", map[string]string{"foo-test": "true", "bar-test": "false"}},
		{"good", map[string]string{}},
		{"good", nil},
		{"bad", map[string]string{"foo-test": "false"}},
	}
	for _, tc := range cases {
		p := newPair(t, quick(0, true).config(b.trusted(t)))
		got := p.compare(t, b, mock(false, 200, tc.out), create(goodPod(tc.image)))
		if len(got.Audit) != len(tc.out) {
			t.Errorf("%s %v: upstream audit %v", tc.image, tc.out, got.Audit)
		}
	}
}

// TestObjectName: the name in the refusal, from the object's name or
// generateName, or "Unknown".
func TestObjectName(t *testing.T) {
	b := newBackend(t, true)
	p := newPair(t, quick(0, false).config(b.trusted(t)))
	for _, meta := range []metav1.ObjectMeta{{Name: "web"}, {GenerateName: "web-"}, {}} {
		pd := goodPod("bad")
		pd.ObjectMeta = meta
		p.compare(t, b, mock(false, 200, nil), create(pd))
	}
}
