package serviceaccount

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkAuthenticatePodBoundToken is one request's service-account
// authentication: signature, claims and the two lookups, on honest
// in-memory objects.
func BenchmarkAuthenticatePodBoundToken(b *testing.B) {
	issuer := NewEphemeralIssuer()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "bot", UID: "sa-1"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web", UID: "pod-1"}}
	tok, err := issuer.Issue(NewClaims(sa, Bound{Pod: pod}, time.Now(), 3600, 0, issuer.Audiences))
	if err != nil {
		b.Fatal(err)
	}
	a := issuer.Authenticator(objects{"serviceaccount/team/bot": sa, "pod/team/web": pod})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok, err := a.AuthenticateToken(ctx, tok, nil); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
