package imagepolicywebhook

import (
	"fmt"
	"math/rand"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

func pick[T any](r *rand.Rand, list ...T) T { return list[r.Intn(len(list))] }

var (
	images = []string{"good", "bad", "nginx:1.27", "registry.example.com/app@sha256:0123", "busybox", ""}
	keys   = []string{"alpha.image-policy.k8s.io/break-glass", "team.image-policy.k8s.io/ticket", "image-policy.k8s.io/x",
		"x.image-policy.k8s.io/", "other/x", "plain", "foo.image-policy.k8s.io"}
	values = []string{"true", "false", "INC-42", ""}
	// audit keys the backend returns: valid ones, and some the audit
	// record refuses.
	auditKeys = []string{"signature", "break-glass", "reason", "bad key!", "UPPER", "", "a/b"}
)

type generator struct{ r *rand.Rand }

func (g generator) containers(max int) []corev1.Container {
	var out []corev1.Container
	for i := g.r.Intn(max + 1); i > 0; i-- {
		out = append(out, corev1.Container{Name: fmt.Sprintf("c%d", i), Image: pick(g.r, images...)})
	}
	return out
}

func (g generator) pod(namespace string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace}}
	switch g.r.Intn(4) {
	case 0:
		p.GenerateName = "web-"
	case 1:
	default:
		p.Name = pick(g.r, "web", "db-0")
	}
	p.Spec.Containers = g.containers(3)
	p.Spec.InitContainers = g.containers(2)
	for _, c := range g.containers(2) {
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: c.Name, Image: c.Image}})
	}
	if n := g.r.Intn(4); n > 0 {
		p.Annotations = map[string]string{}
		for ; n > 0; n-- {
			p.Annotations[pick(g.r, keys...)] = pick(g.r, values...)
		}
	}
	return p
}

func (g generator) request() request {
	ns := pick(g.r, "default", "team-a", "team-b")
	r := request{op: pick(g.r, admission.Create, admission.Create, admission.Update, admission.Update, admission.Delete, admission.Connect),
		resource: podsResource, namespace: ns, obj: g.pod(ns)}
	switch g.r.Intn(10) {
	case 0:
		r.resource = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "pods"}
	case 1:
		r.resource = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	case 2:
		r.obj = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: ns}}
	}
	r.subresource = pick(g.r, "", "", "", "ephemeralcontainers", "ephemeralcontainers", "status")
	return r
}

// answer is one generated backend answer.
func (g generator) answer() reply {
	annotations := func() map[string]string {
		if g.r.Intn(2) == 0 {
			return nil
		}
		m := map[string]string{}
		for i := g.r.Intn(3); i >= 0; i-- {
			m[pick(g.r, auditKeys...)] = pick(g.r, values...)
		}
		return m
	}
	switch g.r.Intn(20) {
	case 0, 1:
		return reply{code: pick(g.r, 500, 429, 504)} // transient
	case 2:
		return reply{code: pick(g.r, 400, 401, 403, 404, 503)}
	case 3:
		return reply{code: 500, contentType: "application/json",
			raw: `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"policy store down","reason":"InternalError","code":500}`}
	case 4:
		return reply{contentType: "application/json", raw: pick(g.r, `not json{`,
			`{"apiVersion":"imagepolicy.k8s.io/v1alpha1","kind":"ImageReview","status":{"allowed":"yes"}}`,
			`{"apiVersion":"v1","kind":"Pod","status":{"phase":"Running"}}`,
			`{"apiVersion":"imagepolicy.k8s.io/v9","kind":"ImageReview","status":{"allowed":true}}`,
			`{"apiVersion":"imagepolicy.k8s.io/v1alpha1","kind":"Other","status":{"allowed":true}}`,
			`{"apiVersion":"v1","kind":"Status","status":"Success","code":200}`,
			`{"apiVersion":"example.com/v1","kind":"Widget"}`)}
	case 5:
		return reply{code: pick(g.r, 200, 201, 204), contentType: "application/json"} // empty body
	case 6:
		return reply{contentType: "application/yaml", raw: "apiVersion: imagepolicy.k8s.io/v1alpha1\nkind: ImageReview\nstatus:\n  allowed: " +
			pick(g.r, "true", "false") + "\n  reason: from yaml\n"}
	case 7:
		return reply{contentType: "application/json", raw: `{"status":{"allowed":` + pick(g.r, "true", "false") + `,"reason":"no kind"}}`}
	case 8:
		return reply{code: 201, allowed: g.r.Intn(2) == 0, reason: "created", annotations: annotations()}
	case 9:
		return reply{delay: 20 * time.Millisecond, allowed: true} // slow, in time
	}
	return reply{allowed: g.r.Intn(3) > 0, reason: pick(g.r, "", "image not signed", "registry not allowed"), annotations: annotations()}
}

// script answers up to five attempts of one request; a third of the
// scripts decide by image (a "bad" image is denied) as a real policy
// would, so that the cache sees repeated reviews.
func (g generator) script() (script, time.Duration) {
	if g.r.Intn(40) == 0 { // too slow for the request's deadline
		return func(int, imagepolicyv1alpha1.ImageReview) reply {
			return reply{delay: 300 * time.Millisecond, allowed: true}
		}, 30 * time.Millisecond
	}
	if g.r.Intn(3) == 0 {
		return mock(true, http.StatusOK, nil), 0
	}
	var answers []reply
	for range 5 {
		answers = append(answers, g.answer())
	}
	return func(n int, _ imagepolicyv1alpha1.ImageReview) reply { return answers[min(n, len(answers)-1)] }, 0
}

// TestGenerated runs generated requests through both plugins, under four
// configurations (cached or not, fail open or closed), each plugin with
// its own cache, one request after the other.
func TestGenerated(t *testing.T) {
	b := newBackend(t, true)
	kubeconfig := b.trusted(t)
	const perConfig = 500
	stats := map[string]int{}
	for i, s := range []settings{
		{allowTTL: 1800, denyTTL: 1800, retryBackoff: 1, defaultAllow: false},
		{allowTTL: 1800, denyTTL: -1, retryBackoff: -1, defaultAllow: true},
		{allowTTL: -1, denyTTL: 1800, retryBackoff: 1, defaultAllow: true},
		{allowTTL: -1, denyTTL: -1, retryBackoff: 1, defaultAllow: false},
	} {
		p := newPair(t, s.config(kubeconfig))
		g := generator{rand.New(rand.NewSource(int64(i + 1)))}
		for range perConfig {
			r := g.request()
			sc, timeout := g.script()
			r.timeout = timeout
			up := p.compare(t, b, sc, r)
			stats[fmt.Sprintf("calls=%d", min(len(up.Sent), 2))]++
			switch {
			case up.Err == "":
				stats["admitted"]++
			default:
				stats[fmt.Sprintf("refused %d", up.Code)]++
			}
			if _, ok := up.Audit["imagepolicywebhook.image-policy.k8s.io/failed-open"]; ok {
				stats["failed open"]++
			}
			if t.Failed() {
				t.FailNow()
			}
		}
	}
	t.Logf("outcomes: %v", stats)
	for _, k := range []string{"admitted", "refused 403", "refused 400", "failed open", "calls=0", "calls=1", "calls=2"} {
		if stats[k] == 0 {
			t.Errorf("no request with %s: the generator misses a case", k)
		}
	}
}
