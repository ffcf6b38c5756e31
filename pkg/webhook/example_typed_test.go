package webhook_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/admitd/admitd/pkg/webhook"
)

// tagPolicy validates pods' images and defaults their pull policy.
type tagPolicy struct{}

func (tagPolicy) ValidateCreate(_ context.Context, pod *corev1.Pod) (webhook.Warnings, error) {
	var warnings webhook.Warnings
	for _, c := range pod.Spec.Containers {
		if strings.HasSuffix(c.Image, ":latest") {
			return nil, fmt.Errorf("container %s: the latest tag is not allowed", c.Name)
		}
		if !strings.Contains(c.Image, ":") {
			warnings = append(warnings, "container "+c.Name+" has no image tag")
		}
	}
	return warnings, nil
}

func (p tagPolicy) ValidateUpdate(ctx context.Context, _, pod *corev1.Pod) (webhook.Warnings, error) {
	return p.ValidateCreate(ctx, pod)
}

func (tagPolicy) ValidateDelete(context.Context, *corev1.Pod) (webhook.Warnings, error) {
	return nil, nil
}

func (tagPolicy) Default(_ context.Context, pod *corev1.Pod) error {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].ImagePullPolicy == "" {
			pod.Spec.Containers[i].ImagePullPolicy = corev1.PullIfNotPresent
		}
	}
	return nil
}

// Typed validators and defaulters, as controller-runtime's CustomValidator
// and CustomDefaulter: the object comes decoded, a defaulter changes it in
// place and the answer carries the patch of its changes.
func ExampleWithValidator() {
	mux := http.NewServeMux()
	mux.Handle("/validate", webhook.Serve(webhook.WithValidator[*corev1.Pod](tagPolicy{})))
	mux.Handle("/default", webhook.Serve(webhook.WithDefaulter[*corev1.Pod](tagPolicy{})))

	fmt.Println(send(mux, "/validate", `{"metadata":{"name":"web"},"spec":{"containers":[{"name":"app","image":"nginx:latest"}]}}`))
	fmt.Println(send(mux, "/validate", `{"metadata":{"name":"web"},"spec":{"containers":[{"name":"app","image":"nginx"}]}}`))
	fmt.Println(send(mux, "/default", `{"metadata":{"name":"web"},"spec":{"containers":[{"name":"app","image":"nginx:1.27"}]}}`))
	// Output:
	// {"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","allowed":false,"status":{"metadata":{},"message":"container app: the latest tag is not allowed"}}}
	// {"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","allowed":true,"warnings":["container app has no image tag"]}}
	// {"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","allowed":true,"patch":"W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMvY29udGFpbmVycy8wL2ltYWdlUHVsbFBvbGljeSIsInZhbHVlIjoiSWZOb3RQcmVzZW50In1d","patchType":"JSONPatch"}}
}
