package registry

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Pod update validation (upstream ValidatePodUpdate): only images, a
// shrinking activeDeadlineSeconds, added tolerations, removed scheduling
// gates and (for gated pods) added node selectors may change.

var updatablePodSpecFields = []string{
	"`spec.containers[*].image`",
	"`spec.initContainers[*].image`",
	"`spec.activeDeadlineSeconds`",
	"`spec.tolerations` (only additions to existing tolerations)",
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
}

func validatePodUpdate(obj, old runtime.Object) field.ErrorList {
	pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
	errs := validatePodMetadataAndSpec(pod, oldPod)
	errs = append(errs, validatePodAnnotationUpdates(pod.Annotations, oldPod.Annotations)...)
	for _, c := range []struct {
		name     string
		new, old []corev1.Container
	}{{"containers", pod.Spec.Containers, oldPod.Spec.Containers}, {"initContainers", pod.Spec.InitContainers, oldPod.Spec.InitContainers}} {
		cErrs, stop := validateContainerUpdates(c.new, c.old, specPath.Child(c.name))
		errs = append(errs, cErrs...)
		if stop {
			return errs
		}
	}
	adsErrs, stop := validateActiveDeadlineUpdate(pod.Spec.ActiveDeadlineSeconds, oldPod.Spec.ActiveDeadlineSeconds)
	if errs = append(errs, adsErrs...); stop {
		return errs
	}
	errs = append(errs, validateAddedTolerations(pod.Spec.Tolerations, oldPod.Spec.Tolerations, specPath.Child("tolerations"))...)
	errs = append(errs, validateRemovedSchedulingGates(pod.Spec.SchedulingGates, oldPod.Spec.SchedulingGates, specPath.Child("schedulingGates"))...)
	if apiequality.Semantic.DeepEqual(pod.Spec, oldPod.Spec) {
		return errs
	}
	munged := mungeUpdatablePodFields(&pod.Spec, &oldPod.Spec)
	if !apiequality.Semantic.DeepEqual(munged, &oldPod.Spec) {
		msg := fmt.Sprintf("pod updates may not change fields other than %s\n%s", strings.Join(updatablePodSpecFields, ","), specDiff(&oldPod.Spec, munged))
		errs = append(errs, field.Forbidden(specPath, msg))
	}
	return errs
}

func validatePodAnnotationUpdates(annotations, oldAnnotations map[string]string) field.ErrorList {
	var errs field.ErrorList
	path := metadataPath.Child("annotations")
	const apparmor = "container.apparmor.security.beta.kubernetes.io/"
	for _, k := range sortedKeys(oldAnnotations) {
		if v, ok := annotations[k]; ok && v == oldAnnotations[k] {
			continue
		}
		if strings.HasPrefix(k, apparmor) {
			errs = append(errs, field.Forbidden(path.Key(k), "may not remove or update AppArmor annotations"))
		}
		if k == mirrorPodAnnotation {
			errs = append(errs, field.Forbidden(path.Key(k), "may not remove or update mirror pod annotation"))
		}
	}
	for _, k := range sortedKeys(annotations) {
		if _, ok := oldAnnotations[k]; ok {
			continue
		}
		if strings.HasPrefix(k, apparmor) {
			errs = append(errs, field.Forbidden(path.Key(k), "may not add AppArmor annotations"))
		}
		if k == mirrorPodAnnotation {
			errs = append(errs, field.Forbidden(path.Key(k), "may not add mirror pod annotation"))
		}
	}
	return errs
}

// validateContainerUpdates forbids adding or removing containers (and then
// stops further checks) and requires images.
func validateContainerUpdates(containers, old []corev1.Container, path *field.Path) (field.ErrorList, bool) {
	if len(containers) != len(old) {
		return field.ErrorList{field.Forbidden(path, "pod updates may not add or remove containers")}, true
	}
	var errs field.ErrorList
	for i, c := range containers {
		if c.Image == "" {
			errs = append(errs, field.Required(path.Index(i).Child("image"), ""))
		}
		errs = append(errs, validateImageWhitespace(&containers[i], path.Index(i))...)
	}
	return errs, false
}

// validateActiveDeadlineUpdate allows setting a deadline or shortening it.
func validateActiveDeadlineUpdate(ads, old *int64) (field.ErrorList, bool) {
	path := specPath.Child("activeDeadlineSeconds")
	switch {
	case ads == nil && old != nil:
		return field.ErrorList{field.Invalid(path, ads, "must not update from a positive integer to nil value")}, false
	case ads == nil:
		return nil, false
	case *ads < 0 || *ads > math.MaxInt32:
		return field.ErrorList{field.Invalid(path, *ads, validation.InclusiveRangeError(0, math.MaxInt32))}, true
	case old != nil && *old < *ads:
		return field.ErrorList{field.Invalid(path, *ads, "must be less than or equal to previous value")}, true
	}
	return nil, false
}

func validateAddedTolerations(tolerations, old []corev1.Toleration, path *field.Path) field.ErrorList {
	for _, o := range old {
		found := false
		for _, t := range tolerations {
			o.TolerationSeconds = t.TolerationSeconds
			if reflect.DeepEqual(o, t) {
				found = true
				break
			}
		}
		if !found {
			return field.ErrorList{field.Forbidden(path, "existing toleration can not be modified except its tolerationSeconds")}
		}
	}
	return validateTolerations(tolerations, path)
}

func validateRemovedSchedulingGates(gates, old []corev1.PodSchedulingGate, path *field.Path) field.ErrorList {
	oldNames := map[string]bool{}
	for _, g := range old {
		oldNames[g.Name] = true
	}
	var errs field.ErrorList
	for i, g := range gates {
		if !oldNames[g.Name] {
			errs = append(errs, field.Forbidden(path.Index(i).Child("name"), fmt.Sprintf("only deletion is allowed, but found new scheduling gate '%s'", g.Name)))
		}
	}
	return errs
}

// mungeUpdatablePodFields returns a copy of spec with every field a pod
// update may change reset to its old value.
func mungeUpdatablePodFields(spec, old *corev1.PodSpec) *corev1.PodSpec {
	m := spec.DeepCopy()
	for i := range m.Containers {
		m.Containers[i].Image = old.Containers[i].Image
	}
	for i := range m.InitContainers {
		m.InitContainers[i].Image = old.InitContainers[i].Image
	}
	m.ActiveDeadlineSeconds = old.ActiveDeadlineSeconds
	m.SchedulingGates = old.SchedulingGates
	m.Tolerations = old.Tolerations
	if g := old.TerminationGracePeriodSeconds; g != nil && *g < 0 && m.TerminationGracePeriodSeconds != nil && *m.TerminationGracePeriodSeconds == 1 {
		m.TerminationGracePeriodSeconds = g
	}
	if len(old.SchedulingGates) > 0 {
		// Gated pods may gain node selectors and node affinity terms; the
		// finer rules (additions only) are not checked here.
		m.NodeSelector = old.NodeSelector
		if m.Affinity != nil && old.Affinity != nil {
			m.Affinity.NodeAffinity = old.Affinity.NodeAffinity
		} else if m.Affinity != nil && m.Affinity.PodAffinity == nil && m.Affinity.PodAntiAffinity == nil {
			m.Affinity = old.Affinity
		}
	}
	return m
}

// specDiff describes how two values differ, one changed JSON path per line
// ("-" old, "+" new). Upstream prints a go-cmp diff here; the content is the
// same information in a different layout.
func specDiff(oldV, newV any) string {
	var a, b any
	oldJSON, _ := json.Marshal(oldV)
	newJSON, _ := json.Marshal(newV)
	_ = json.Unmarshal(oldJSON, &a)
	_ = json.Unmarshal(newJSON, &b)
	var lines []string
	diffJSON("", a, b, &lines)
	return strings.Join(lines, "\n")
}

func diffJSON(path string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			diffJSON(path+"."+k, am[k], bm[k], out)
		}
		return
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == len(bs) {
		for i := range as {
			diffJSON(fmt.Sprintf("%s[%d]", path, i), as[i], bs[i], out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		aj, _ := json.Marshal(a)
		bj, _ := json.Marshal(b)
		*out = append(*out, fmt.Sprintf("  %s: -%s +%s", strings.TrimPrefix(path, "."), aj, bj))
	}
}
