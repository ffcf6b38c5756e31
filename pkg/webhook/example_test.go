package webhook_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/webhook"
)

// A mutating webhook that gives every pod a team label, and a validating one
// that refuses privileged containers: the whole webhook, without the review
// that the example sends it.
func Example() {
	defaultTeam := webhook.HandlerFunc(func(_ context.Context, req webhook.Request) webhook.Response {
		var pod corev1.Pod
		if err := req.DecodeObject(&pod); err != nil {
			return webhook.Errored(http.StatusBadRequest, err)
		}
		if pod.Labels["team"] != "" {
			return webhook.Allowed("")
		}
		labelled := pod.DeepCopy()
		metav1.SetMetaDataLabel(&labelled.ObjectMeta, "team", "unowned")
		return webhook.Patched(&pod, labelled).WithWarnings("pod has no team; labelled unowned")
	})
	noPrivileged := webhook.HandlerFunc(func(_ context.Context, req webhook.Request) webhook.Response {
		var pod corev1.Pod
		if err := req.DecodeObject(&pod); err != nil {
			return webhook.Errored(http.StatusBadRequest, err)
		}
		for _, c := range pod.Spec.Containers {
			if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
				return webhook.Denied("container " + c.Name + " is privileged")
			}
		}
		return webhook.Allowed("")
	})
	mux := http.NewServeMux()
	mux.Handle("/default-team", webhook.Serve(defaultTeam))
	mux.Handle("/no-privileged", webhook.Serve(noPrivileged))
	// In a real server: (&webhook.Server{CertFile: …, KeyFile: …, Handler: mux}).ListenAndServe(ctx)

	fmt.Println(send(mux, "/default-team", `{"metadata":{"name":"web"},"spec":{"containers":[{"name":"app","image":"nginx"}]}}`))
	fmt.Println(send(mux, "/no-privileged", `{"metadata":{"name":"web"},"spec":{"containers":[{"name":"app","securityContext":{"privileged":true}}]}}`))
	// Output:
	// {"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","allowed":true,"patch":"W3sib3AiOiJhZGQiLCJwYXRoIjoiL21ldGFkYXRhL2xhYmVscyIsInZhbHVlIjp7InRlYW0iOiJ1bm93bmVkIn19XQ==","patchType":"JSONPatch","warnings":["pod has no team; labelled unowned"]}}
	// {"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","allowed":false,"status":{"metadata":{},"message":"container app is privileged"}}}
}

// send posts a v1 review of a pod CREATE to path and returns the answer, as
// kube-apiserver would.
func send(h http.Handler, path, pod string) string {
	body := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"705ab4f5-6393-11e8-b7cc-42010a800002",` +
		`"kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},` +
		`"operation":"CREATE","userInfo":{"username":"alice"},"object":` + pod + `}}`
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Body.String()
}

// Serving webhooks over HTTPS: the certificate is reloaded when the files
// change (cert-manager renewals, rotated secret volumes), /readyz is served,
// and SIGINT drains the reviews in flight before the server stops. Addr
// ":8443" listens on every interface, as a webhook in a Pod must; without it
// the server listens on 127.0.0.1 only (DefaultAddr).
func ExampleServer() {
	mux := http.NewServeMux()
	mux.Handle("/always-allow", webhook.Serve(webhook.HandlerFunc(func(context.Context, webhook.Request) webhook.Response {
		return webhook.Allowed("")
	})))
	srv := &webhook.Server{Addr: ":8443", CertFile: "/certs/tls.crt", KeyFile: "/certs/tls.key", Handler: mux}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := srv.ListenAndServe(ctx); err != nil {
		log.Fatal(err)
	}
}

func ExampleCreatePatch() {
	patch, err := webhook.CreatePatch(
		[]byte(`{"metadata":{"annotations":{"a/b":"1"}},"spec":{"containers":[{"name":"app"}]}}`),
		[]byte(`{"metadata":{"annotations":{"a/b":"2"}},"spec":{"containers":[{"name":"app"},{"name":"sidecar"}]}}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(patch))
	// Output:
	// [{"op":"replace","path":"/metadata/annotations/a~1b","value":"2"},{"op":"add","path":"/spec/containers/-","value":{"name":"sidecar"}}]
}
