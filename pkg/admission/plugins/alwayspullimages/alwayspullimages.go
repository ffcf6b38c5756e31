// Package alwayspullimages is the AlwaysPullImages admission plugin: every
// new pod, and every pod update that brings an image the pod did not use,
// gets imagePullPolicy Always on all its containers (init, regular and
// ephemeral) and image volumes, so that a node pulls — and checks the
// credentials for — an image before each use. The validating phase refuses
// such a pod when something after the mutating phase changed a policy back.
//
// It does not look at subresources (ephemeral containers added through
// pods/ephemeralcontainers keep their policy, as upstream).
package alwayspullimages

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/admitd/admitd/pkg/admission"
)

// Name is the upstream plugin name.
const Name = "AlwaysPullImages"

var podsResource = schema.GroupResource{Resource: "pods"}

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(admission.PluginContext) (admission.Handler, error) { return Plugin{}, nil })
}

// Plugin is the AlwaysPullImages plugin.
type Plugin struct{}

var (
	_ admission.Mutator   = Plugin{}
	_ admission.Validator = Plugin{}
)

// Handles CREATE and UPDATE.
func (Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

func errNotPod() error {
	return apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")
}

// Admit sets every pull policy of the pod to Always.
func (Plugin) Admit(_ context.Context, a *admission.Attributes) error {
	if ignored(a) {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return errNotPod()
	}
	visitContainers(&pod.Spec, func(c *corev1.Container, _ *field.Path) bool {
		c.ImagePullPolicy = corev1.PullAlways
		return true
	})
	for i := range pod.Spec.Volumes {
		if img := pod.Spec.Volumes[i].Image; img != nil {
			img.PullPolicy = corev1.PullAlways
		}
	}
	return nil
}

// Validate refuses a pod with a pull policy other than Always. The errors
// are an aggregate of 403s, which the client receives as a 500, as from
// upstream.
func (Plugin) Validate(_ context.Context, a *admission.Attributes) error {
	if ignored(a) {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return errNotPod()
	}
	var errs []error
	always := []string{string(corev1.PullAlways)}
	visitContainers(&pod.Spec, func(c *corev1.Container, p *field.Path) bool {
		if c.ImagePullPolicy != corev1.PullAlways {
			errs = append(errs, admission.NewForbidden(a, field.NotSupported(p.Child("imagePullPolicy"), c.ImagePullPolicy, always)))
		}
		return true
	})
	for i, v := range pod.Spec.Volumes {
		if v.Image != nil && v.Image.PullPolicy != corev1.PullAlways {
			p := field.NewPath("spec", "volumes").Index(i).Child("image", "pullPolicy")
			errs = append(errs, admission.NewForbidden(a, field.NotSupported(p, v.Image.PullPolicy, always)))
		}
	}
	if len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}
	return nil
}

// ignored reports whether the plugin leaves the request alone: anything but
// the pods resource itself, and pod updates that bring no new image.
func ignored(a *admission.Attributes) bool {
	if a.Subresource != "" || a.Resource.GroupResource() != podsResource {
		return true
	}
	return a.Operation == admission.Update && noNewImages(a)
}

// noNewImages reports whether every image of the updated pod was already
// used by the old one; false when either object is not a Pod.
func noNewImages(a *admission.Attributes) bool {
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return false
	}
	old, ok := a.OldObject.(*corev1.Pod)
	if !ok {
		return false
	}
	images := map[string]bool{}
	visitContainers(&old.Spec, func(c *corev1.Container, _ *field.Path) bool {
		images[c.Image] = true
		return true
	})
	return visitContainers(&pod.Spec, func(c *corev1.Container, _ *field.Path) bool {
		return images[c.Image]
	})
}

// visitContainers calls visit for the init, regular and ephemeral
// containers of spec, in that order, with their field paths, until visit
// returns false; it reports whether every call returned true.
func visitContainers(spec *corev1.PodSpec, visit func(c *corev1.Container, p *field.Path) bool) bool {
	specPath := field.NewPath("spec")
	for i := range spec.InitContainers {
		if !visit(&spec.InitContainers[i], specPath.Child("initContainers").Index(i)) {
			return false
		}
	}
	for i := range spec.Containers {
		if !visit(&spec.Containers[i], specPath.Child("containers").Index(i)) {
			return false
		}
	}
	for i := range spec.EphemeralContainers {
		c := (*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon)
		if !visit(c, specPath.Child("ephemeralContainers").Index(i)) {
			return false
		}
	}
	return true
}
