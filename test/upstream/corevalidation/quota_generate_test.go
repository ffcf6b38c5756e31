package corevalidation

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

var (
	quotaNames = []string{"cpu", "memory", "requests.cpu", "limits.memory", "limits.cpu", "requests.memory", "pods", "services",
		"requests.storage", "persistentvolumeclaims", "hugepages-2Mi", "requests.hugepages-1Gi", "ephemeral-storage",
		"configmaps", "services.nodeports", "storage", "example.com/gpu", "requests.example.com/gpu", "count/deployments.apps",
		"kubernetes.io/foo", "nvidia.com/gpu", "bad name!", "Foo", "a/b/c", ""}
	quantities  = []string{"1", "500m", "-1", "2Gi", "1.5", "0", "100", "3", "1Mi", "250m"}
	quotaScopes = []string{"Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass",
		"CrossNamespacePodAffinity", "VolumeAttributesClass", "Bogus", ""}
	scopeOperators = []string{"In", "NotIn", "Exists", "DoesNotExist", "Bad", ""}
)

func (g *generator) resourceList(names []string, most int) corev1.ResourceList {
	if g.chance(5) {
		return nil
	}
	out := corev1.ResourceList{}
	for range g.rng.Intn(most + 1) {
		out[corev1.ResourceName(g.pick(names...))] = resource.MustParse(g.pick(quantities...))
	}
	return out
}

func (g *generator) quota() *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{ObjectMeta: g.meta("compute")}
	q.Spec.Hard = g.resourceList(quotaNames, 3)
	for range g.rng.Intn(3) {
		q.Spec.Scopes = append(q.Spec.Scopes, corev1.ResourceQuotaScope(g.pick(quotaScopes...)))
	}
	if g.chance(3) {
		q.Spec.ScopeSelector = g.scopeSelector()
	}
	if g.chance(3) {
		q.Status = g.quotaStatus()
	}
	return q
}

func (g *generator) scopeSelector() *corev1.ScopeSelector {
	sel := &corev1.ScopeSelector{}
	for range g.rng.Intn(3) {
		req := corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScope(g.pick(quotaScopes...)),
			Operator: corev1.ScopeSelectorOperator(g.pick(scopeOperators...))}
		for range g.rng.Intn(3) {
			req.Values = append(req.Values, g.pick("high", "low", "", "bad value!"))
		}
		sel.MatchExpressions = append(sel.MatchExpressions, req)
	}
	return sel
}

func (g *generator) quotaStatus() corev1.ResourceQuotaStatus {
	return corev1.ResourceQuotaStatus{Hard: g.resourceList(quotaNames, 2), Used: g.resourceList(quotaNames, 2)}
}

func (g *generator) changeQuota(q *corev1.ResourceQuota) {
	f := g.quota()
	switch g.rng.Intn(5) {
	case 0:
		q.Spec = f.Spec
	case 1:
		q.Spec.Hard = f.Spec.Hard
	case 2:
		q.Spec.Scopes = append(q.Spec.Scopes, corev1.ResourceQuotaScope(g.pick(quotaScopes...)))
	case 3:
		q.Spec.ScopeSelector = f.Spec.ScopeSelector
	}
	if g.chance(2) {
		q.Status = g.quotaStatus()
	}
}
