package imagepolicywebhook_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// denyBad allows every review but those with an image named "bad".
func denyBad(r imagepolicyv1alpha1.ImageReview) answer {
	for _, c := range r.Spec.Containers {
		if c.Image == "bad" {
			return answer{reason: "image bad is not signed"}
		}
	}
	return answer{allowed: true}
}

func TestDecision(t *testing.T) {
	b := newBackend(t)
	b.decide = denyBad
	p := plugin(t, config, b.kubeconfig(t, b.CA.CertPEM, true))
	cases := []struct {
		name, wantErr string
		pod           *corev1.Pod
	}{
		{"good", "", pod("p1", "good")},
		{"bad", `pods "p2" is forbidden: image policy webhook backend denied one or more images: image bad is not signed`, pod("p2", "good", "bad")},
		{"bad init container", `pods "p3" is forbidden: image policy webhook backend denied one or more images: image bad is not signed`,
			func() *corev1.Pod {
				p := pod("p3", "good")
				p.Spec.InitContainers = []corev1.Container{{Image: "bad"}}
				return p
			}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := p.Validate(context.Background(), createAttrs(tc.pod))
			if got := errText(err); got != tc.wantErr {
				t.Fatalf("Validate = %q, want %q", got, tc.wantErr)
			}
			if err != nil && !apierrors.IsForbidden(err) {
				t.Errorf("Validate = %v, want a 403", err)
			}
		})
	}
}

func TestDeniedWithoutReason(t *testing.T) {
	b := newBackend(t)
	b.answers(answer{allowed: false})
	p := plugin(t, config, b.kubeconfig(t, b.CA.CertPEM, true))
	err := p.Validate(context.Background(), createAttrs(pod("p", "x")))
	if want := `pods "p" is forbidden: one or more images rejected by webhook backend`; errText(err) != want {
		t.Fatalf("Validate = %q, want %q", errText(err), want)
	}
}

func TestReviewSent(t *testing.T) {
	b := newBackend(t)
	p := plugin(t, config, b.kubeconfig(t, b.CA.CertPEM, true))
	pd := pod("p", "app:1", "sidecar:2")
	pd.Spec.InitContainers = []corev1.Container{{Image: "init:3"}}
	pd.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Image: "debug:4"}}}
	pd.Annotations = map[string]string{
		"alpha.image-policy.k8s.io/break-glass": "true",
		"mycorp.image-policy.k8s.io/ticket":     "INC-1",
		"image-policy.k8s.io/no-dot-prefix":     "x",
		"other":                                 "y",
	}
	if err := p.Validate(context.Background(), createAttrs(pd)); err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"ImageReview","apiVersion":"imagepolicy.k8s.io/v1alpha1","metadata":{},` +
		`"spec":{"containers":[{"image":"app:1"},{"image":"sidecar:2"},{"image":"init:3"}],` +
		`"annotations":{"alpha.image-policy.k8s.io/break-glass":"true","mycorp.image-policy.k8s.io/ticket":"INC-1"},"namespace":"team"},` +
		`"status":{"allowed":false}}` + "\n"
	if got := string(b.bodies[0]); got != want {
		t.Errorf("body = %s, want %s", got, want)
	}

	// The ephemeralcontainers subresource reviews the ephemeral containers only.
	a := admissiontest.Update(pd, pd).Resource(podsGVR, "ephemeralcontainers").Attributes()
	if err := p.Validate(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if got, want := b.lastReview().Spec.Containers, []imagepolicyv1alpha1.ImageReviewContainerSpec{{Image: "debug:4"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("ephemeralcontainers: containers = %v, want %v", got, want)
	}
}

func TestIgnored(t *testing.T) {
	b := newBackend(t)
	p := plugin(t, config, b.kubeconfig(t, b.CA.CertPEM, true))
	pd := pod("p", "x")
	for _, a := range []*admission.Attributes{
		admissiontest.Update(pd, pd).Resource(podsGVR, "status").Attributes(),
		admissiontest.Create(pd).Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "pods"}, "").Attributes(),
	} {
		if err := p.Validate(context.Background(), a); err != nil {
			t.Errorf("Validate(%s/%s) = %v, want nil", a.Resource, a.Subresource, err)
		}
	}
	if n := b.calls(); n != 0 {
		t.Errorf("backend called %d times, want 0", n)
	}
	if p.Handles(admission.Delete) || p.Handles(admission.Connect) || !p.Handles(admission.Create) || !p.Handles(admission.Update) {
		t.Error("Handles: want CREATE and UPDATE only")
	}
	notPod := admissiontest.Create(&corev1.Service{}).Resource(podsGVR, "").Attributes()
	err := p.Validate(context.Background(), notPod)
	if !apierrors.IsBadRequest(err) || err.Error() != "Resource was marked with kind Pod but was unable to be converted" {
		t.Errorf("Validate(Service as pods) = %v, want upstream's 400", err)
	}
}

func TestCache(t *testing.T) {
	b := newBackend(t)
	b.decide = denyBad
	p := plugin(t, config, b.kubeconfig(t, b.CA.CertPEM, true))
	ctx := context.Background()
	for i, step := range []struct {
		pod       *corev1.Pod
		wantCalls int
	}{
		{pod("a", "good"), 1},
		{pod("b", "good"), 1}, // same spec: cached allow
		{pod("c", "bad"), 2},
		{pod("d", "bad"), 2}, // cached deny
		{pod("e", "good", "good"), 3},
	} {
		_ = p.Validate(ctx, createAttrs(step.pod))
		if n := b.calls(); n != step.wantCalls {
			t.Fatalf("step %d: backend calls = %d, want %d", i, n, step.wantCalls)
		}
	}
	// A namespace or an annotation makes another review.
	other := pod("f", "good")
	other.Namespace = "elsewhere"
	_ = p.Validate(ctx, createAttrs(other))
	other = pod("g", "good")
	other.Annotations = map[string]string{"x.image-policy.k8s.io/y": "z"}
	_ = p.Validate(ctx, createAttrs(other))
	if n := b.calls(); n != 5 {
		t.Fatalf("backend calls = %d, want 5", n)
	}
}

func TestCacheDisabledAndErrorsNotCached(t *testing.T) {
	b := newBackend(t)
	b.answers(answer{code: http.StatusForbidden}, answer{allowed: true})
	noCache := strings.NewReplacer("allowTTL: 60", "allowTTL: -1", "denyTTL: 60", "denyTTL: -1").Replace(config)
	p := plugin(t, noCache, b.kubeconfig(t, b.CA.CertPEM, true))
	ctx := context.Background()
	if err := p.Validate(ctx, createAttrs(pod("p", "x"))); !apierrors.IsForbidden(err) {
		t.Fatalf("first Validate = %v, want the backend's failure as a 403", err)
	}
	for i := range 2 {
		if err := p.Validate(ctx, createAttrs(pod("p", "x"))); err != nil {
			t.Fatalf("Validate %d = %v", i, err)
		}
	}
	if n := b.calls(); n != 3 {
		t.Errorf("backend calls = %d, want 3 (no answer cached)", n)
	}
}

func TestRetry(t *testing.T) {
	b := newBackend(t)
	p := plugin(t, config, b.kubeconfig(t, b.CA.CertPEM, true))
	ctx := context.Background()

	b.answers(answer{code: 500}, answer{code: 429}, answer{allowed: true})
	if err := p.Validate(ctx, createAttrs(pod("p", "one"))); err != nil {
		t.Fatalf("Validate = %v, want allowed after two transient failures", err)
	}
	if n := b.calls(); n != 3 {
		t.Errorf("calls = %d, want 3", n)
	}

	b.answers(answer{code: 500})
	if err := p.Validate(ctx, createAttrs(pod("p", "two"))); !apierrors.IsForbidden(err) {
		t.Fatalf("Validate = %v, want a 403", err)
	}
	if n := b.calls(); n != 5 {
		t.Errorf("calls = %d, want 5 attempts", n)
	}

	b.answers(answer{code: 404}, answer{allowed: true})
	if err := p.Validate(ctx, createAttrs(pod("p", "three"))); !apierrors.IsForbidden(err) {
		t.Fatalf("Validate = %v, want a 403", err)
	}
	if n := b.calls(); n != 1 {
		t.Errorf("calls = %d, want 1 (a 404 is not retried)", n)
	}
}

func TestDefaultAllow(t *testing.T) {
	b := newBackend(t)
	b.answers(answer{code: 500})
	failOpen := strings.Replace(config, "defaultAllow: false", "defaultAllow: true", 1)
	p := plugin(t, failOpen, b.kubeconfig(t, b.CA.CertPEM, true))
	pd := pod("p", "x")
	a := createAttrs(pd)
	if err := p.Validate(context.Background(), a); err != nil {
		t.Fatalf("Validate = %v, want allowed (fail open)", err)
	}
	if got := annotations(a); !reflect.DeepEqual(got, map[string]string{"imagepolicywebhook.image-policy.k8s.io/failed-open": "true"}) {
		t.Errorf("audit annotations = %v", got)
	}
	if seen := a.Object.(*corev1.Pod); seen.Annotations["alpha.image-policy.k8s.io/failed-open"] != "true" {
		t.Errorf("pod annotations after the plugin = %v, want alpha.image-policy.k8s.io/failed-open", seen.Annotations)
	}
	if len(pd.Annotations) != 0 {
		t.Errorf("the pod to store was annotated %v, want it unchanged", pd.Annotations)
	}

	closed := plugin(t, config, b.kubeconfig(t, b.CA.CertPEM, true))
	pd = pod("p", "x")
	a = createAttrs(pd)
	if err := closed.Validate(context.Background(), a); !apierrors.IsForbidden(err) {
		t.Fatalf("Validate = %v, want a 403 (fail closed)", err)
	}
	if len(annotations(a)) != 0 || len(pd.Annotations) != 0 || a.Object != pd {
		t.Errorf("fail closed: annotations %v, pod annotations %v, want none", annotations(a), pd.Annotations)
	}
}

func TestAuditAnnotations(t *testing.T) {
	b := newBackend(t)
	b.answers(answer{allowed: false, reason: "no", annotations: map[string]string{"signature": "missing", "break-glass": "refused"}})
	p := plugin(t, config, b.kubeconfig(t, b.CA.CertPEM, true))
	want := map[string]string{
		"imagepolicywebhook.image-policy.k8s.io/signature":   "missing",
		"imagepolicywebhook.image-policy.k8s.io/break-glass": "refused",
	}
	for i := range 2 { // the second answer comes from the cache
		a := createAttrs(pod("p", "x"))
		if err := p.Validate(context.Background(), a); err == nil {
			t.Fatal("Validate = nil, want denied")
		}
		if got := annotations(a); !reflect.DeepEqual(got, want) {
			t.Errorf("round %d: audit annotations = %v, want %v", i, got, want)
		}
	}
}

func TestTLS(t *testing.T) {
	b := newBackend(t)
	other := newBackend(t)
	cases := []struct {
		name     string
		ca       []byte
		withCert bool
		ok       bool
	}{
		{"trusted, with client certificate", b.CA.CertPEM, true, true},
		{"no client certificate", b.CA.CertPEM, false, false},
		{"server not trusted", other.CA.CertPEM, true, false},
		{"no CA", nil, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := plugin(t, config, b.kubeconfig(t, tc.ca, tc.withCert))
			err := p.Validate(context.Background(), createAttrs(pod("p", "x")))
			if (err == nil) != tc.ok {
				t.Fatalf("Validate = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func annotations(a *admission.Attributes) map[string]string {
	out := map[string]string{}
	for _, an := range a.Record.Annotations(admission.LevelRequestResponse) {
		out[an.Key] = an.Value
	}
	return out
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestConcurrent: requests from many goroutines share the client and the
// cache; each gets the answer for its own images.
func TestConcurrent(t *testing.T) {
	b := newBackend(t)
	b.decide = denyBad
	p := plugin(t, config, b.kubeconfig(t, b.CA.CertPEM, true))
	var wg sync.WaitGroup
	errs := make(chan error, 16*20)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				image := fmt.Sprintf("img-%d", (g+i)%5)
				if i%4 == 0 {
					image = "bad"
				}
				err := p.Validate(context.Background(), createAttrs(pod("p", image)))
				if (err != nil) != (image == "bad") {
					errs <- fmt.Errorf("image %s: Validate = %v", image, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := b.calls(); n < 6 || n > 16*20 {
		t.Errorf("backend calls = %d, want between 6 (all cached) and %d", n, 16*20)
	}
}
