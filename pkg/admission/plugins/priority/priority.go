// Package priority is the Priority admission plugin: a Pod created with a
// priorityClassName gets the class's priority and preemption policy, one
// created without gets the global default class's (or priority 0), a pod
// that states a priority or policy other than its class's is refused, and
// an update keeps the priority and policy the pod was created with. It also
// refuses a second PriorityClass marked globalDefault.
//
// It reads PriorityClasses from the watch-fed cache. The system classes
// (system-node-critical, system-cluster-critical) are ordinary objects the
// server creates at start (internal/server), not special cases here. The
// PodGroup and CompositePodGroup admission of upstream (behind the
// GenericWorkload and CompositePodGroup gates) is not here: admitd serves
// neither resource.
package priority

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/admitd/admitd/pkg/admission"
)

// Name is the upstream plugin name.
const Name = "Priority"

// DefaultPriority is the priority of a pod without a class when no class is
// the global default.
const DefaultPriority int32 = 0

var priorityClassesGVR = schedulingv1.SchemeGroupVersion.WithResource("priorityclasses")

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		if pc.Cache == nil {
			return nil, fmt.Errorf("%s requires a lister", Name)
		}
		return New(pc.Cache), nil
	})
}

// Plugin is the Priority plugin.
type Plugin struct {
	classes admission.ResourceCache
}

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
)

// New returns the plugin reading PriorityClasses from cache.
func New(cache admission.ObjectCache) *Plugin {
	return &Plugin{classes: admission.CacheOf(cache, priorityClassesGVR)}
}

// Handles CREATE, UPDATE and DELETE.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update || op == admission.Delete
}

// Admit resolves the priority of a created pod and keeps it on update.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.Subresource != "" || a.Resource.Group != "" || a.Resource.Resource != "pods" {
		return nil
	}
	switch a.Operation {
	case admission.Create:
		return p.admitPodCreate(ctx, a)
	case admission.Update:
		return admitPodUpdate(a)
	}
	return nil
}

// Validate refuses a second global default PriorityClass.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Subresource != "" || a.Resource.Group != schedulingv1.GroupName || a.Resource.Resource != "priorityclasses" {
		return nil
	}
	if a.Operation != admission.Create && a.Operation != admission.Update {
		return nil
	}
	pc, ok := a.Object.(*schedulingv1.PriorityClass)
	if !ok || pc == nil {
		return apierrors.NewBadRequest("resource was marked with kind PriorityClass but was unable to be converted")
	}
	if !pc.GlobalDefault {
		return nil
	}
	def, err := p.defaultClass(ctx)
	if err != nil {
		return fmt.Errorf("failed to get default priority class: %v", err)
	}
	if def != nil && (a.Operation == admission.Create || def.Name != pc.Name) {
		return admission.NewForbidden(a, fmt.Errorf("PriorityClass %v is already marked as default. Only one default can exist", def.Name))
	}
	return nil
}

func podOf(obj any) (*corev1.Pod, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod == nil {
		return nil, apierrors.NewBadRequest("resource was marked with kind Pod but was unable to be converted")
	}
	return pod, nil
}

// admitPodUpdate keeps the priority and preemption policy of the stored
// pod when the update omits them (validation refuses real changes).
func admitPodUpdate(a *admission.Attributes) error {
	pod, err := podOf(a.Object)
	if err != nil {
		return err
	}
	old, err := podOf(a.OldObject)
	if err != nil {
		return err
	}
	if pod.Spec.Priority == nil && old.Spec.Priority != nil {
		v := *old.Spec.Priority
		pod.Spec.Priority = &v
	}
	if pod.Spec.PreemptionPolicy == nil && old.Spec.PreemptionPolicy != nil {
		v := *old.Spec.PreemptionPolicy
		pod.Spec.PreemptionPolicy = &v
	}
	return nil
}

// admitPodCreate sets the class, priority and preemption policy of a new
// pod, refusing a priority or policy the pod states otherwise.
func (p *Plugin) admitPodCreate(ctx context.Context, a *admission.Attributes) error {
	pod, err := podOf(a.Object)
	if err != nil {
		return err
	}
	name, priority, policy, err := p.resolve(ctx, a, pod.Spec.PriorityClassName)
	if err != nil {
		return err
	}
	pod.Spec.PriorityClassName = name
	if pod.Spec.Priority != nil && *pod.Spec.Priority != priority {
		return admission.NewForbidden(a, fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, priority))
	}
	pod.Spec.Priority = &priority
	if policy != nil {
		if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy != *policy {
			return admission.NewForbidden(a, fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *pod.Spec.PreemptionPolicy, *policy))
		}
		pc := *policy
		pod.Spec.PreemptionPolicy = &pc
	}
	return nil
}

// resolve returns the class name, priority and preemption policy for a pod
// naming class (empty: the global default class, else no class, priority 0
// and PreemptLowerPriority).
func (p *Plugin) resolve(ctx context.Context, a *admission.Attributes, class string) (string, int32, *corev1.PreemptionPolicy, error) {
	if class == "" {
		def, err := p.defaultClass(ctx)
		if err != nil {
			return "", 0, nil, fmt.Errorf("error occurred while retrieving default priority class: %w", err)
		}
		if def == nil {
			lower := corev1.PreemptLowerPriority
			return "", DefaultPriority, &lower, nil
		}
		return def.Name, def.Value, def.PreemptionPolicy, nil
	}
	obj, err := p.classes.Get(ctx, "", class)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return "", 0, nil, admission.NewForbidden(a, fmt.Errorf("no PriorityClass with name %v was found", class))
		}
		return "", 0, nil, fmt.Errorf("failed to resolve PriorityClass with name %s: %w", class, err)
	}
	pc, ok := obj.(*schedulingv1.PriorityClass)
	if !ok {
		return "", 0, nil, fmt.Errorf("failed to resolve PriorityClass with name %s: unexpected object of type %T", class, obj)
	}
	return class, pc.Value, pc.PreemptionPolicy, nil
}

// defaultClass returns the global default class, nil when there is none.
// Should a race have let several in, the lowest value wins (the first by
// name among equals).
func (p *Plugin) defaultClass(ctx context.Context) (*schedulingv1.PriorityClass, error) {
	objs, err := p.classes.List(ctx, "", nil)
	if err != nil {
		return nil, err
	}
	var def *schedulingv1.PriorityClass
	for _, obj := range objs {
		pc, ok := obj.(*schedulingv1.PriorityClass)
		if !ok || !pc.GlobalDefault {
			continue
		}
		if def == nil || pc.Value < def.Value {
			def = pc
		}
	}
	return def, nil
}
