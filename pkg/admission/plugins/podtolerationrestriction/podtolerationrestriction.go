// Package podtolerationrestriction is the PodTolerationRestriction
// admission plugin: a Pod created in a namespace gets the namespace's
// default tolerations (annotation
// scheduler.alpha.kubernetes.io/defaultTolerations, else the cluster's
// default from the plugin configuration), a Pod that is not BestEffort
// tolerates memory pressure, and a Pod whose tolerations are not covered by
// the namespace's whitelist (scheduler.alpha.kubernetes.io/tolerationsWhitelist,
// else the cluster's) is refused.
//
// It reads namespaces through the plugin context; it does not look at
// nodes or taints.
package podtolerationrestriction

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/internal/tolerations"
	"github.com/admitd/admitd/pkg/apis/core/qos"
)

// Name is the upstream plugin name.
const Name = "PodTolerationRestriction"

// The namespace annotations the plugin reads: JSON arrays of v1
// Tolerations.
const (
	DefaultTolerationsAnnotation = "scheduler.alpha.kubernetes.io/defaultTolerations"
	WhitelistAnnotation          = "scheduler.alpha.kubernetes.io/tolerationsWhitelist"
)

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		cfg, err := LoadConfiguration(pc.Config)
		if err != nil {
			return nil, err
		}
		if pc.Namespaces == nil {
			return nil, fmt.Errorf("missing namespaceLister")
		}
		return New(cfg, pc.Namespaces, pc.Gates()), nil
	})
}

// Plugin is the PodTolerationRestriction plugin.
type Plugin struct {
	cfg        *Configuration
	namespaces admission.NamespaceLookup
	gates      admission.FeatureGates
}

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
)

// New returns the plugin with the cluster-wide configuration cfg (nil: none),
// reading namespaces from ns and QoS-related feature gates from gates.
func New(cfg *Configuration, ns admission.NamespaceLookup, gates admission.FeatureGates) *Plugin {
	if cfg == nil {
		cfg = &Configuration{}
	}
	return &Plugin{cfg: cfg, namespaces: ns, gates: gates}
}

// Handles CREATE and UPDATE.
func (*Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

func podOf(a *admission.Attributes) *corev1.Pod {
	if a.Resource.Group != "" || a.Resource.Resource != "pods" || a.Subresource != "" {
		return nil
	}
	pod, _ := a.Object.(*corev1.Pod)
	return pod
}

// Admit merges the default tolerations (on CREATE) and the memory-pressure
// toleration (for pods that are not BestEffort) into the pod, then checks
// the whitelist.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	pod := podOf(a)
	if pod == nil {
		return nil
	}
	var extra []corev1.Toleration
	if a.Operation == admission.Create {
		ns, err := p.namespace(ctx, a.Namespace)
		if err != nil {
			return err
		}
		ts, err := annotationTolerations(ns, DefaultTolerationsAnnotation)
		if err != nil {
			return err
		}
		if ts == nil {
			ts = p.cfg.Default
		}
		extra = append(extra, ts...)
	}
	if qos.Of(pod, p.gates) != corev1.PodQOSBestEffort {
		extra = append(extra, corev1.Toleration{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	if len(extra) > 0 {
		pod.Spec.Tolerations = tolerations.Merge(pod.Spec.Tolerations, copyTolerations(extra))
	}
	return p.Validate(ctx, a)
}

// Validate refuses a pod with a toleration its namespace's whitelist (or
// the cluster's) does not cover.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	pod := podOf(a)
	if pod == nil || len(pod.Spec.Tolerations) == 0 {
		return nil
	}
	ns, err := p.namespace(ctx, a.Namespace)
	if err != nil {
		return err
	}
	whitelist, err := annotationTolerations(ns, WhitelistAnnotation)
	if err != nil {
		return err
	}
	scope := "namespace"
	if whitelist == nil {
		whitelist, scope = p.cfg.Whitelist, "cluster"
	}
	if !tolerations.Allowed(pod.Spec.Tolerations, whitelist) {
		return fmt.Errorf("pod tolerations (possibly merged with namespace default tolerations) conflict with its %s whitelist", scope)
	}
	return nil
}

// namespace returns the namespace; NotFound as is, any other failure as an
// internal error.
func (p *Plugin) namespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	ns, err := p.namespaces.GetNamespace(ctx, name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, err
		}
		return nil, apierrors.NewInternalError(err)
	}
	return ns, nil
}

// annotationTolerations parses the namespace annotation key: nil when it
// is absent, empty when its value is empty.
func annotationTolerations(ns *corev1.Namespace, key string) ([]corev1.Toleration, error) {
	v, ok := ns.Annotations[key]
	if !ok {
		return nil, nil
	}
	if v == "" {
		return []corev1.Toleration{}, nil
	}
	var ts []corev1.Toleration
	if err := json.Unmarshal([]byte(v), &ts); err != nil {
		return nil, err
	}
	if ts == nil { // "null" parses as no tolerations, present
		ts = []corev1.Toleration{}
	}
	return ts, nil
}

// copyTolerations copies ts, so that the pod never shares the
// tolerationSeconds of a cached namespace or of the configuration.
func copyTolerations(ts []corev1.Toleration) []corev1.Toleration {
	out := make([]corev1.Toleration, len(ts))
	for i := range ts {
		ts[i].DeepCopyInto(&out[i])
	}
	return out
}
