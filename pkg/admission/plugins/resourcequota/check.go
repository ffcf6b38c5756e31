package resourcequota

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/quota"
)

// checkRequest charges the request's usage to the quotas that constrain
// its object and returns them with status.used advanced (quotas itself when
// nothing changes; it is never modified), or the error that refuses the
// request.
func checkRequest(quotas []corev1.ResourceQuota, a *admission.Attributes, e quota.Evaluator, limited []LimitedResource) ([]corev1.ResourceQuota, error) {
	if !e.Handles(a) {
		return quotas, nil
	}
	obj := a.Object
	limitedScopes, err := limitedScopesOf(e, obj, limited)
	if err != nil {
		return quotas, nil
	}
	limitedNames, err := limitedNamesOf(e, a, limited)
	if err != nil {
		return quotas, err
	}
	m, err := matchQuotas(quotas, a, e)
	if err != nil {
		return nil, err
	}
	if meta, merr := meta.Accessor(obj); a.Namespace != "" && merr == nil && meta.GetNamespace() == "" {
		meta.SetNamespace(a.Namespace)
	}
	usage, err := e.Usage(obj)
	if err != nil {
		return quotas, err
	}
	if neg := quota.Negative(usage); len(neg) > 0 {
		return nil, admission.NewForbidden(a, fmt.Errorf("quota usage is negative for resource(s): %s", quota.FormatNames(neg)))
	}
	deltas, noQuotaDelta, err := deltasOf(quotas, m.indexes, a, e, usage)
	if err != nil {
		return quotas, err
	}
	if len(m.indexes) != 0 && len(deltas) == 0 {
		return quotas, nil
	}
	if len(m.indexes) == 0 && len(quota.WithoutZeros(noQuotaDelta)) == 0 {
		return quotas, nil
	}
	if uncovered := missingNames(limitedNames, m.restricted); len(uncovered) > 0 {
		return quotas, admission.NewForbidden(a, fmt.Errorf("insufficient quota to consume: %v", strings.Join(uncovered, ",")))
	}
	if uncovered := e.UncoveredScopes(limitedScopes, m.scopes); len(uncovered) > 0 {
		return quotas, fmt.Errorf("insufficient quota to match these scopes: %v", uncovered)
	}
	if len(m.indexes) == 0 {
		return quotas, nil
	}
	return charge(quotas, m.indexes, deltas, a)
}

// matched is what the quotas of a namespace say about a request's object.
type matched struct {
	indexes    []int                                      // quotas constraining the object
	restricted map[corev1.ResourceName]bool               // names they limit that the evaluator tracks
	scopes     []corev1.ScopedResourceSelectorRequirement // their selectors the object matches
}

// matchQuotas finds the quotas that constrain the object, checking the
// evaluator's constraints and that each has usage for what it limits.
func matchQuotas(quotas []corev1.ResourceQuota, a *admission.Attributes, e quota.Evaluator) (matched, error) {
	m := matched{restricted: map[corev1.ResourceName]bool{}}
	for i := range quotas {
		q := &quotas[i]
		s, err := e.MatchingScopes(a.Object, quota.QuotaSelectors(q))
		if err != nil {
			return m, fmt.Errorf("error matching scopes of quota %s, err: %v", q.Name, err)
		}
		m.scopes = append(m.scopes, s...)
		ok, err := e.Matches(q, a.Object)
		if err != nil {
			return m, err
		}
		if !ok {
			continue
		}
		restricted := e.MatchingResources(quota.Names(q.Status.Hard))
		if err := e.Constraints(restricted, a.Object); err != nil {
			return m, admission.NewForbidden(a, fmt.Errorf("failed quota: %s: %v", q.Name, err))
		}
		if missing := withoutUsage(q, restricted); missing {
			return m, admission.NewForbidden(a, fmt.Errorf("status unknown for quota: %s, resources: %s", q.Name, quota.FormatNames(restricted)))
		}
		m.indexes = append(m.indexes, i)
		for _, n := range restricted {
			m.restricted[n] = true
		}
	}
	return m, nil
}

// withoutUsage reports whether q limits one of names without a used
// figure for it.
func withoutUsage(q *corev1.ResourceQuota, names []corev1.ResourceName) bool {
	for _, n := range names {
		if _, hard := q.Status.Hard[n]; !hard {
			continue
		}
		if _, ok := q.Status.Used[n]; !ok {
			return true
		}
	}
	return false
}

// deltasOf returns what the request adds to each constraining quota (by
// index, zero entries and empty deltas dropped) and, when no quota
// constrains it, what it adds at all. An update adds only the growth over
// the old object for quotas that constrained the old object too.
func deltasOf(quotas []corev1.ResourceQuota, indexes []int, a *admission.Attributes, e quota.Evaluator, usage corev1.ResourceList) (map[int]corev1.ResourceList, corev1.ResourceList, error) {
	var none corev1.ResourceList
	if a.Operation == admission.Create && len(indexes) == 0 {
		none = usage
	}
	grown := make([]bool, len(indexes)) // charged the growth, not the usage
	var growth corev1.ResourceList
	if a.Operation == admission.Update {
		var err error
		if growth, err = updateDeltas(quotas, indexes, a, e, usage, grown, &none); err != nil {
			return nil, nil, err
		}
	}
	full, grew := quota.WithoutZeros(usage), quota.WithoutZeros(growth)
	deltas := make(map[int]corev1.ResourceList, len(indexes))
	for j, i := range indexes {
		d := full
		if grown[j] {
			d = grew
		}
		if len(d) != 0 {
			deltas[i] = d
		}
	}
	return deltas, none, nil
}

// updateDeltas returns the growth of an update over its old object, marks
// in grown the quotas that matched the old object too, and sets none.
func updateDeltas(quotas []corev1.ResourceQuota, indexes []int, a *admission.Attributes, e quota.Evaluator, usage corev1.ResourceList, grown []bool, none *corev1.ResourceList) (corev1.ResourceList, error) {
	old := a.OldObject
	if old == nil {
		return nil, admission.NewForbidden(a, fmt.Errorf("unable to get previous usage since prior version of object was not found"))
	}
	m, err := meta.Accessor(old)
	if err != nil {
		return nil, nil
	}
	if m.GetResourceVersion() == "" {
		if len(indexes) == 0 {
			*none = usage
		}
		return nil, nil
	}
	prev, err := e.Usage(old)
	if err != nil {
		return nil, err
	}
	growth := quota.SubtractNonNegative(usage, prev)
	if len(indexes) == 0 {
		*none = growth
	}
	for j, i := range indexes {
		ok, err := e.Matches(&quotas[i], old)
		if err != nil {
			return nil, err
		}
		grown[j] = ok
	}
	return growth, nil
}

// charge adds each quota's delta (limited to its hard names) to its used
// figures, refusing a request that would exceed a hard limit (except on
// the status subresource).
func charge(quotas []corev1.ResourceQuota, indexes []int, deltas map[int]corev1.ResourceList, a *admission.Attributes) ([]corev1.ResourceQuota, error) {
	out := make([]corev1.ResourceQuota, len(quotas))
	copy(out, quotas)
	for _, i := range indexes {
		d, ok := deltas[i]
		if !ok {
			continue
		}
		q := &out[i]
		requested := onlyIn(d, q.Status.Hard)
		used := quota.Add(q.Status.Used, requested)
		if a.Subresource != "status" {
			if over := exceeded(requested, used, q.Status.Hard); len(over) > 0 {
				return nil, admission.NewForbidden(a, fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s",
					q.Name, quota.FormatList(quota.Mask(requested, over)), quota.FormatList(quota.Mask(q.Status.Used, over)), quota.FormatList(quota.Mask(q.Status.Hard, over))))
			}
		}
		q.Status.Used = used
	}
	return out, nil
}

// onlyIn returns the entries of l whose names are in names (shared, not
// copied).
func onlyIn(l, names corev1.ResourceList) corev1.ResourceList {
	out := make(corev1.ResourceList, len(l))
	for k, v := range l {
		if _, ok := names[k]; ok {
			out[k] = v
		}
	}
	return out
}

// exceeded returns the requested names whose used figure is over hard.
func exceeded(requested, used, hard corev1.ResourceList) []corev1.ResourceName {
	var out []corev1.ResourceName
	for k := range requested {
		if u, h := used[k], hard[k]; u.Cmp(h) > 0 {
			out = append(out, k)
		}
	}
	return out
}

// limitedScopesOf returns the configured scopes of limited resources the
// object is in.
func limitedScopesOf(e quota.Evaluator, obj runtime.Object, limited []LimitedResource) ([]corev1.ScopedResourceSelectorRequirement, error) {
	out := []corev1.ScopedResourceSelectorRequirement{}
	for _, l := range limited {
		s, err := e.MatchingScopes(obj, l.MatchScopes)
		if err != nil {
			return nil, err
		}
		out = append(out, s...)
	}
	return out, nil
}

// limitedNamesOf returns the names the object consumes (positively) that a
// limited resource of its resource matches by substring.
func limitedNamesOf(e quota.Evaluator, a *admission.Attributes, limited []LimitedResource) ([]corev1.ResourceName, error) {
	gr := a.Resource.GroupResource()
	var mine []LimitedResource
	for _, l := range limited {
		if l.APIGroup == gr.Group && l.Resource == gr.Resource {
			mine = append(mine, l)
		}
	}
	if len(mine) == 0 {
		return nil, nil
	}
	usage, err := e.Usage(a.Object)
	if err != nil {
		return nil, err
	}
	var out []corev1.ResourceName
	for _, l := range mine {
		for n, v := range usage {
			if v.Sign() != 1 {
				continue
			}
			for _, sub := range l.MatchContains {
				if strings.Contains(string(n), sub) {
					out = append(out, n)
					break
				}
			}
		}
	}
	return out, nil
}

// missingNames returns the names (sorted, unique) not in covered.
func missingNames(names []corev1.ResourceName, covered map[corev1.ResourceName]bool) []string {
	seen := map[corev1.ResourceName]bool{}
	var out []corev1.ResourceName
	for _, n := range names {
		if !covered[n] && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	quota.SortNames(out)
	s := make([]string, len(out))
	for i, n := range out {
		s[i] = string(n)
	}
	return s
}
