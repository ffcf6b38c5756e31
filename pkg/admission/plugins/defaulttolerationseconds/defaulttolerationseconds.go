// Package defaulttolerationseconds is the DefaultTolerationSeconds
// admission plugin: a Pod that does not tolerate the not-ready or the
// unreachable NoExecute taint gets a toleration for it, bounded by
// --default-not-ready-toleration-seconds and
// --default-unreachable-toleration-seconds, so that its pods leave a node
// that stays unhealthy.
//
// It neither reads cluster state nor checks the tolerations a pod has.
package defaulttolerationseconds

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/admitd/admitd/pkg/admission"
)

// Name is the upstream plugin name.
const Name = "DefaultTolerationSeconds"

// Options are the plugin's two flags.
type Options struct {
	// NotReadySeconds is the tolerationSeconds of the added
	// node.kubernetes.io/not-ready toleration
	// (--default-not-ready-toleration-seconds). Nil: 300.
	NotReadySeconds *int64
	// UnreachableSeconds is the tolerationSeconds of the added
	// node.kubernetes.io/unreachable toleration
	// (--default-unreachable-toleration-seconds). Nil: 300.
	UnreachableSeconds *int64
}

// DefaultSeconds is upstream's default of both flags.
const DefaultSeconds int64 = 300

// Register adds the plugin to r.
func Register(r *admission.Registry, o Options) {
	r.Register(Name, func(admission.PluginContext) (admission.Handler, error) { return New(o), nil })
}

// New returns the plugin.
func New(o Options) *Plugin {
	return &Plugin{notReady: orDefault(o.NotReadySeconds), unreachable: orDefault(o.UnreachableSeconds)}
}

func orDefault(s *int64) int64 {
	if s == nil {
		return DefaultSeconds
	}
	return *s
}

// Plugin is the DefaultTolerationSeconds plugin.
type Plugin struct{ notReady, unreachable int64 }

var _ admission.Mutator = (*Plugin)(nil)

// Handles CREATE and UPDATE.
func (*Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Admit appends the missing default tolerations.
func (p *Plugin) Admit(_ context.Context, a *admission.Attributes) error {
	if a.Resource.Group != "" || a.Resource.Resource != "pods" || a.Subresource != "" {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("expected *api.Pod but got %T", a.Object))
	}
	notReady, unreachable := false, false
	for _, t := range pod.Spec.Tolerations {
		if t.Effect != corev1.TaintEffectNoExecute && t.Effect != "" {
			continue
		}
		// Operator and value are not looked at, as upstream.
		notReady = notReady || t.Key == corev1.TaintNodeNotReady || t.Key == ""
		unreachable = unreachable || t.Key == corev1.TaintNodeUnreachable || t.Key == ""
	}
	if !notReady && !unreachable && len(pod.Spec.Tolerations) == 0 {
		// The usual pod: both tolerations, made in one allocation.
		b := new(defaultTolerations)
		b.seconds = [2]int64{p.notReady, p.unreachable}
		b.list[0] = corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &b.seconds[0]}
		b.list[1] = corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &b.seconds[1]}
		pod.Spec.Tolerations = b.list[:]
		return nil
	}
	missing := 0
	for _, lacks := range []bool{!notReady, !unreachable} {
		if lacks {
			missing++
		}
	}
	pod.Spec.Tolerations = slices.Grow(pod.Spec.Tolerations, missing)
	if !notReady {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, toleration(corev1.TaintNodeNotReady, p.notReady))
	}
	if !unreachable {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, toleration(corev1.TaintNodeUnreachable, p.unreachable))
	}
	return nil
}

// defaultTolerations are the two tolerations and the seconds they point to.
type defaultTolerations struct {
	list    [2]corev1.Toleration
	seconds [2]int64
}

func toleration(key string, seconds int64) corev1.Toleration {
	return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &seconds}
}
