// Package imagepolicywebhook is the ImagePolicyWebhook admission plugin:
// before a pod is created or updated, the images of its containers (regular
// and init; for the pods/ephemeralcontainers subresource, its ephemeral
// containers) are sent in an imagepolicy.k8s.io/v1alpha1 ImageReview to a
// backend named by a kubeconfig file, which allows or denies them. Answers
// are cached (allowTTL, denyTTL); failed calls are retried with backoff;
// a backend that cannot answer refuses the pod unless defaultAllow is set.
//
// The pod's annotations whose key contains ".image-policy.k8s.io/" (such as
// the break-glass annotation alpha.image-policy.k8s.io/break-glass) go to
// the backend with the review; it alone decides what they mean. The audit
// annotations the backend returns are recorded under
// imagepolicywebhook.image-policy.k8s.io/.
//
// A pod admitted because the backend failed (defaultAllow) is marked with
// an audit annotation, and the later validating plugins see it annotated
// alpha.image-policy.k8s.io/failed-open; the stored pod is not.
//
// Its configuration is mandatory: the plugin's section of
// --admission-control-config-file (see LoadConfiguration). It only looks
// at pods.
package imagepolicywebhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/cache"

	"github.com/admitd/admitd/pkg/admission"
)

// Name is the upstream plugin name.
const Name = "ImagePolicyWebhook"

// Keys of the annotations the plugin writes.
const (
	// AuditKeyPrefix prefixes every audit annotation the plugin records,
	// those the backend returns included.
	AuditKeyPrefix = "imagepolicywebhook.image-policy.k8s.io/"
	// FailedOpenAuditKey is the audit annotation recorded ("true") when a
	// pod is admitted because the backend failed and defaultAllow is set.
	FailedOpenAuditKey = AuditKeyPrefix + "failed-open"
	// FailedOpenPodAnnotation is set ("true") on such a pod itself.
	FailedOpenPodAnnotation = "alpha.image-policy.k8s.io/failed-open"
)

// reviewedAnnotation is what a pod annotation key must contain to be sent
// to the backend.
const reviewedAnnotation = ".image-policy.k8s.io/"

// cacheSize is the number of answers kept.
const cacheSize = 1024

var podsResource = schema.GroupResource{Resource: "pods"}

// Register adds the plugin to r; its factory reads the plugin's
// configuration from the PluginContext.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		c, err := LoadConfiguration(pc.Config)
		if err != nil {
			return nil, err
		}
		return New(*c)
	})
}

// Plugin is the ImagePolicyWebhook plugin.
type Plugin struct {
	backend      *backend
	answers      *cache.LRUExpireCache // JSON of the review's spec → ImageReviewStatus
	allowTTL     time.Duration
	denyTTL      time.Duration
	defaultAllow bool
}

var _ admission.Validator = (*Plugin)(nil)

// New builds the plugin for c, whose durations are already normalized (as
// LoadConfiguration returns them). It fails when the kubeconfig cannot be
// read or gives no usable client.
func New(c Configuration) (*Plugin, error) {
	b, err := newBackend(c.KubeConfigFile, c.RetryBackoff)
	if err != nil {
		return nil, err
	}
	return &Plugin{
		backend:      b,
		answers:      cache.NewLRUExpireCache(cacheSize),
		allowTTL:     c.AllowTTL,
		denyTTL:      c.DenyTTL,
		defaultAllow: c.DefaultAllow,
	}, nil
}

// Handles CREATE and UPDATE.
func (*Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Validate asks the backend (or the cache) about the pod's images.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Resource.GroupResource() != podsResource || (a.Subresource != "" && a.Subresource != "ephemeralcontainers") {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")
	}
	review := &imagepolicyv1alpha1.ImageReview{Spec: imagepolicyv1alpha1.ImageReviewSpec{
		Containers:  reviewedContainers(pod, a.Subresource),
		Annotations: reviewedAnnotations(pod.Annotations),
		Namespace:   a.Namespace,
	}}
	if err := p.decide(ctx, pod, a, review); err != nil {
		return admission.NewForbidden(a, err)
	}
	return nil
}

// reviewedContainers lists the images the backend reviews: the regular then
// the init containers', or for the ephemeralcontainers subresource the
// ephemeral containers'.
func reviewedContainers(pod *corev1.Pod, subresource string) []imagepolicyv1alpha1.ImageReviewContainerSpec {
	var out []imagepolicyv1alpha1.ImageReviewContainerSpec
	if subresource == "ephemeralcontainers" {
		for _, c := range pod.Spec.EphemeralContainers {
			out = append(out, imagepolicyv1alpha1.ImageReviewContainerSpec{Image: c.Image})
		}
		return out
	}
	for _, c := range pod.Spec.Containers {
		out = append(out, imagepolicyv1alpha1.ImageReviewContainerSpec{Image: c.Image})
	}
	for _, c := range pod.Spec.InitContainers {
		out = append(out, imagepolicyv1alpha1.ImageReviewContainerSpec{Image: c.Image})
	}
	return out
}

// reviewedAnnotations keeps the annotations meant for image policy.
func reviewedAnnotations(all map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range all {
		if strings.Contains(k, reviewedAnnotation) {
			out[k] = v
		}
	}
	return out
}

// decide gets the answer for review, from the cache or the backend, records
// its audit annotations and returns the refusal, if any (not yet a Status).
func (p *Plugin) decide(ctx context.Context, pod *corev1.Pod, a *admission.Attributes, review *imagepolicyv1alpha1.ImageReview) error {
	key, err := json.Marshal(review.Spec)
	if err != nil {
		return err
	}
	if cached, ok := p.answers.Get(string(key)); ok {
		review.Status = cached.(imagepolicyv1alpha1.ImageReviewStatus)
	} else {
		if err := p.backend.review(ctx, review); err != nil {
			return p.backendFailed(pod, a, err)
		}
		p.answers.Add(string(key), review.Status, p.ttl(review.Status))
	}
	for k, v := range review.Status.AuditAnnotations {
		// A key the audit log refuses is dropped, as upstream (which
		// only logs it).
		_ = a.Record.AddAnnotation(AuditKeyPrefix+k, v)
	}
	if review.Status.Allowed {
		return nil
	}
	if review.Status.Reason != "" {
		return fmt.Errorf("image policy webhook backend denied one or more images: %s", review.Status.Reason)
	}
	return errors.New("one or more images rejected by webhook backend")
}

func (p *Plugin) ttl(s imagepolicyv1alpha1.ImageReviewStatus) time.Duration {
	if s.Allowed {
		return p.allowTTL
	}
	return p.denyTTL
}

// backendFailed decides when the backend gave no answer: with defaultAllow
// the pod is admitted and marked, with an audit annotation and with an
// annotation on the pod that the later validating plugins see (webhooks
// and policies receive it) but that is not stored: upstream writes it on
// the copy of the object its validating phase is given. Here the server
// validates the object it stores, so the plugin marks a copy and hands
// that on in a.Object. Without defaultAllow the pod is refused with the
// failure.
func (p *Plugin) backendFailed(pod *corev1.Pod, a *admission.Attributes, err error) error {
	if !p.defaultAllow {
		return admission.NewForbidden(a, err)
	}
	_ = a.Record.AddAnnotation(FailedOpenAuditKey, "true")
	marked := pod.DeepCopy()
	if marked.Annotations == nil {
		marked.Annotations = map[string]string{}
	}
	marked.Annotations[FailedOpenPodAnnotation] = "true"
	a.Object = marked
	return nil
}
