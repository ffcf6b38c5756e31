package quota

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/apis/core/qos"
)

// deviceClassPrefix names the implicit extended resources of DRA device
// classes (resource.k8s.io's ResourceDeviceClassPrefix).
const deviceClassPrefix = "deviceclass.resource.kubernetes.io/"

var podsResource = schema.GroupResource{Resource: "pods"}

// podNames are the fixed names the pod evaluator tracks.
var podNames = []corev1.ResourceName{
	ObjectCountName(podsResource),
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
	corev1.ResourcePods,
}

// requiredPerContainer are the names that, when a quota tracks them, every
// container must request or limit (a compatibility rule upstream keeps).
var requiredPerContainer = []corev1.ResourceName{
	corev1.ResourceCPU, corev1.ResourceMemory,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
}

// Options are the feature gates and clock the evaluators read.
type Options struct {
	// PodLevelResources: pod-level spec.resources count and lift the
	// per-container requirement.
	PodLevelResources bool
	// InPlacePodVerticalScaling: a pod's usage is the larger of its spec
	// and its status resources.
	InPlacePodVerticalScaling bool
	// VolumeAttributesClass: claims have the VolumeAttributesClass scope.
	VolumeAttributesClass bool
	// RecoverVolumeExpansionFailure: a claim's storage is the larger of its
	// request and its allocated size.
	RecoverVolumeExpansionFailure bool
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// OptionsFor returns the options of the feature gates g.
func OptionsFor(g admission.FeatureGates) Options {
	return Options{
		PodLevelResources:             g.Enabled("PodLevelResources"),
		InPlacePodVerticalScaling:     g.Enabled("InPlacePodVerticalScaling"),
		VolumeAttributesClass:         g.Enabled("VolumeAttributesClass"),
		RecoverVolumeExpansionFailure: g.Enabled("RecoverVolumeExpansionFailure"),
	}
}

func (o Options) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

type pods struct{ opts Options }

// NewPods returns the pod evaluator.
func NewPods(opts Options) Evaluator { return &pods{opts: opts} }

func (p *pods) GroupResource() schema.GroupResource { return podsResource }

// Handles pod creates, resizes, and updates that change whether the pod is
// terminating.
func (p *pods) Handles(a *admission.Attributes) bool {
	switch a.Subresource {
	case "":
		if a.Operation == admission.Update {
			pod, ok1 := a.Object.(*corev1.Pod)
			old, ok2 := a.OldObject.(*corev1.Pod)
			if !ok1 || !ok2 {
				return false
			}
			if isTerminating(pod) != isTerminating(old) {
				return true
			}
		}
		return a.Operation == admission.Create
	case "resize":
		return a.Operation == admission.Update
	}
	return false
}

func (p *pods) Matches(q *corev1.ResourceQuota, obj runtime.Object) (bool, error) {
	return matches(q, obj, podTracks, p.scope)
}

func (p *pods) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	out := intersect(input, podNames)
	for _, n := range input {
		s := string(n)
		if strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) || strings.HasPrefix(s, corev1.ResourceRequestsHugePagesPrefix) {
			out = append(out, n)
		}
		if isExtendedQuotaName(n) {
			out = append(out, n)
		}
	}
	return out
}

// podTracks reports whether the pod evaluator tracks n.
func podTracks(n corev1.ResourceName) bool {
	s := string(n)
	return containsName(podNames, n) || strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) ||
		strings.HasPrefix(s, corev1.ResourceRequestsHugePagesPrefix) || isExtendedQuotaName(n)
}

// isExtendedQuotaName reports whether n is requests.<extended resource>:
// not a kubernetes.io resource, or an implicit device class resource.
func isExtendedQuotaName(n corev1.ResourceName) bool {
	s := string(n)
	nonNative := !isNative(n)
	implicit := strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix+deviceClassPrefix)
	return (nonNative || implicit) && strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix)
}

// isNative reports whether n is in the kubernetes.io namespace (unprefixed
// names are).
func isNative(n corev1.ResourceName) bool {
	s := string(n)
	return !strings.Contains(s, "/") || strings.Contains(s, corev1.ResourceDefaultNamespacePrefix)
}

// isExtendedResource reports whether a container resource name is an
// extended resource (or a DRA device class resource) charged as
// requests.<name>.
func isExtendedResource(n corev1.ResourceName) bool {
	if strings.HasPrefix(string(n), deviceClassPrefix) {
		return true
	}
	if isNative(n) || strings.HasPrefix(string(n), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(n))) == 0
}

func (p *pods) MatchingScopes(obj runtime.Object, sels []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return matchingScopes(obj, sels, p.scope)
}

func (p *pods) UncoveredScopes(limited, matched []corev1.ScopedResourceSelectorRequirement) []corev1.ScopedResourceSelectorRequirement {
	return uncoveredByName(limited, matched)
}

// Constraints requires each container and init container to state every
// cpu and memory resource required names, unless pod-level resources are
// set.
func (p *pods) Constraints(required []corev1.ResourceName, obj runtime.Object) error {
	pod, err := asPod(obj)
	if err != nil {
		return err
	}
	if p.opts.PodLevelResources && resourcehelper.IsPodLevelResourcesSet(pod) {
		return nil
	}
	var need []corev1.ResourceName
	for _, n := range requiredPerContainer {
		if containsName(required, n) {
			need = append(need, n)
		}
	}
	if len(need) == 0 {
		return nil
	}
	var missing map[corev1.ResourceName][]string
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			for _, n := range need {
				if !states(&cs[i].Resources, n) {
					if missing == nil {
						missing = map[corev1.ResourceName][]string{}
					}
					missing[n] = appendOnce(missing[n], cs[i].Name)
				}
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	names := make([]corev1.ResourceName, 0, len(missing))
	for n := range missing {
		names = append(names, n)
	}
	SortNames(names)
	parts := make([]string, len(names))
	for i, n := range names {
		sort.Strings(missing[n])
		parts[i] = fmt.Sprintf("%s for: %s", n, strings.Join(missing[n], ","))
	}
	return fmt.Errorf("must specify %s", strings.Join(parts, "; "))
}

// states reports whether a container's resources give the quota name n
// (one of requiredPerContainer): cpu and requests.cpu are the cpu request,
// limits.cpu its limit; memory likewise.
func states(r *corev1.ResourceRequirements, n corev1.ResourceName) bool {
	var ok bool
	switch n {
	case corev1.ResourceCPU, corev1.ResourceRequestsCPU:
		_, ok = r.Requests[corev1.ResourceCPU]
	case corev1.ResourceMemory, corev1.ResourceRequestsMemory:
		_, ok = r.Requests[corev1.ResourceMemory]
	case corev1.ResourceLimitsCPU:
		_, ok = r.Limits[corev1.ResourceCPU]
	case corev1.ResourceLimitsMemory:
		_, ok = r.Limits[corev1.ResourceMemory]
	}
	return ok
}

func appendOnce(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// Usage charges count/pods always and, while the pod is not terminal nor
// past its deletion grace period, pods=1 and its effective requests and
// limits.
func (p *pods) Usage(obj runtime.Object) (corev1.ResourceList, error) {
	pod, err := asPod(obj)
	if err != nil {
		return corev1.ResourceList{}, err
	}
	out := corev1.ResourceList{ObjectCountName(podsResource): one()}
	if !p.charged(pod) {
		return out, nil
	}
	pod = unshared(pod)
	ro := resourcehelper.PodResourcesOptions{
		UseStatusResources:    p.opts.InPlacePodVerticalScaling,
		SkipPodLevelResources: !p.opts.PodLevelResources,
	}
	for k, v := range containerUsage(resourcehelper.PodRequests(pod, ro), resourcehelper.PodLimits(pod, ro)) {
		out[k] = v
	}
	return out, nil
}

// unshared returns pod, or a copy of it whose pod-level resources are its
// own when it has both those and an overhead: component-helpers adds the
// overhead to the pod-level quantities in place, and pod may be shared
// (a cached object).
func unshared(pod *corev1.Pod) *corev1.Pod {
	if pod.Spec.Resources == nil || pod.Spec.Overhead == nil {
		return pod
	}
	cp := *pod
	cp.Spec.Resources = pod.Spec.Resources.DeepCopy()
	return &cp
}

// charged reports whether the pod's compute resources count: not
// terminal, and not past the end of its deletion grace period.
func (p *pods) charged(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return false
	}
	if pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil {
		end := pod.DeletionTimestamp.Time.Add(time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second)
		if p.opts.now().After(end) {
			return false
		}
	}
	return true
}

// containerUsage is pods=1 plus the quota names of requests and limits.
func containerUsage(requests, limits corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{corev1.ResourcePods: one()}
	for _, r := range []struct{ plain, req, lim corev1.ResourceName }{
		{corev1.ResourceCPU, corev1.ResourceRequestsCPU, corev1.ResourceLimitsCPU},
		{corev1.ResourceMemory, corev1.ResourceRequestsMemory, corev1.ResourceLimitsMemory},
		{corev1.ResourceEphemeralStorage, corev1.ResourceRequestsEphemeralStorage, corev1.ResourceLimitsEphemeralStorage},
	} {
		if v, ok := requests[r.plain]; ok {
			out[r.plain] = v
			out[r.req] = v
		}
		if v, ok := limits[r.plain]; ok {
			out[r.lim] = v
		}
	}
	for n, v := range requests {
		if strings.HasPrefix(string(n), corev1.ResourceHugePagesPrefix) {
			out[n] = v
			out[corev1.DefaultResourceRequestsPrefix+n] = v
		}
		if isExtendedResource(n) {
			out[corev1.DefaultResourceRequestsPrefix+n] = v
		}
	}
	return out
}

func asPod(obj runtime.Object) (*corev1.Pod, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("expect *api.Pod or *v1.Pod, got %v", obj)
	}
	return pod, nil
}

func isTerminating(pod *corev1.Pod) bool {
	return pod.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds >= 0
}

// scope reports whether a pod scope selector selects the pod.
func (p *pods) scope(sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error) {
	pod, err := asPod(obj)
	if err != nil {
		return false, err
	}
	switch sel.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return isTerminating(pod), nil
	case corev1.ResourceQuotaScopeNotTerminating:
		return !isTerminating(pod), nil
	case corev1.ResourceQuotaScopeBestEffort:
		return qos.Of(pod, podLevelGates(p.opts.PodLevelResources)) == corev1.PodQOSBestEffort, nil
	case corev1.ResourceQuotaScopeNotBestEffort:
		return qos.Of(pod, podLevelGates(p.opts.PodLevelResources)) != corev1.PodQOSBestEffort, nil
	case corev1.ResourceQuotaScopePriorityClass:
		if sel.Operator == corev1.ScopeSelectorOpExists {
			return pod.Spec.PriorityClassName != "", nil
		}
		return priorityClassSelected(pod, sel)
	case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return crossNamespaceAffinity(pod), nil
	}
	return false, nil
}

func priorityClassSelected(pod *corev1.Pod, sel corev1.ScopedResourceSelectorRequirement) (bool, error) {
	s, err := selectorFor(sel)
	if err != nil {
		return false, fmt.Errorf("failed to parse and convert selector: %v", err)
	}
	var set labels.Set
	if pod.Spec.PriorityClassName != "" {
		set = labels.Set{string(corev1.ResourceQuotaScopePriorityClass): pod.Spec.PriorityClassName}
	}
	return s.Matches(set), nil
}

// crossNamespaceAffinity reports whether any pod affinity or anti-affinity
// term names namespaces or a namespace selector.
func crossNamespaceAffinity(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	if a == nil {
		return false
	}
	var terms []corev1.PodAffinityTerm
	var weighted []corev1.WeightedPodAffinityTerm
	if a.PodAffinity != nil {
		terms = append(terms, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		weighted = append(weighted, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution...)
	}
	if a.PodAntiAffinity != nil {
		terms = append(terms, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		weighted = append(weighted, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution...)
	}
	for _, w := range weighted {
		terms = append(terms, w.PodAffinityTerm)
	}
	for _, t := range terms {
		if len(t.Namespaces) != 0 || t.NamespaceSelector != nil {
			return true
		}
	}
	return false
}

// podLevelGates are the gates QoS classification reads: PodLevelResources as
// the evaluator was built with, PodLevelResourcesFixKubeletQOSClass at its
// 1.37 default (on).
type podLevelGates bool

func (g podLevelGates) Enabled(name string) bool {
	if name == "PodLevelResources" {
		return bool(g)
	}
	return name == "PodLevelResourcesFixKubeletQOSClass"
}
