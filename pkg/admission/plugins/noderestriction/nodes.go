package noderestriction

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/admitd/admitd/pkg/admission"
)

// admitNode lets a node write only its own Node, without a config source,
// and without changing its taints, owner references or restricted labels.
func (r *request) admitNode() error {
	if r.a.Name != r.node {
		return forbidden(r.a, "node %q is not allowed to modify node %q", r.node, r.a.Name)
	}
	switch r.a.Operation {
	case admission.Create:
		return r.admitNodeCreate()
	case admission.Update:
		return r.admitNodeUpdate()
	}
	return nil
}

func (r *request) admitNodeCreate() error {
	node, ok := r.a.Object.(*corev1.Node)
	if !ok {
		return unexpectedType(r.a, r.a.Object)
	}
	if node.Spec.ConfigSource != nil {
		return forbidden(r.a, "node %q is not allowed to create pods with a non-nil configSource", r.node)
	}
	if bad := forbiddenLabels(modifiedLabels(node.Labels, nil)); len(bad) > 0 {
		return forbidden(r.a, "node %q is not allowed to set the following labels: %s", r.node, strings.Join(bad, ", "))
	}
	return nil
}

func (r *request) admitNodeUpdate() error {
	node, ok := r.a.Object.(*corev1.Node)
	if !ok {
		return unexpectedType(r.a, r.a.Object)
	}
	old, ok := r.a.OldObject.(*corev1.Node)
	if !ok {
		return unexpectedType(r.a, r.a.Object) // sic: upstream names the new object
	}
	// A nil config source is allowed: old kubelets drop the field.
	if node.Spec.ConfigSource != nil && !equality.Semantic.DeepEqual(node.Spec.ConfigSource, old.Spec.ConfigSource) {
		return forbidden(r.a, "node %q is not allowed to update configSource to a new non-nil configSource", r.node)
	}
	if !equality.Semantic.DeepEqual(node.Spec.Taints, old.Spec.Taints) {
		return forbidden(r.a, "node %q is not allowed to modify taints", r.node)
	}
	if !equality.Semantic.DeepEqual(node.OwnerReferences, old.OwnerReferences) {
		return forbidden(r.a, "node %q is not allowed to modify ownerReferences", r.node)
	}
	if bad := forbiddenLabels(modifiedLabels(node.Labels, old.Labels)); len(bad) > 0 {
		return forbidden(r.a, "is not allowed to modify labels: %s", strings.Join(bad, ", "))
	}
	return nil
}

// modifiedLabels are the keys added, removed or changed between a and b.
func modifiedLabels(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			out = append(out, k)
		}
	}
	for k, v := range b {
		if w, ok := a[k]; !ok || v != w {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// forbiddenLabels are the keys, sorted, a node may not set: the
// node-restriction.kubernetes.io ones, and kubernetes.io and k8s.io ones
// but those kubelets set.
func forbiddenLabels(keys []string) []string {
	var out []string
	for _, k := range keys {
		prefix := labelPrefix(k)
		if inDomain(prefix, corev1.LabelNamespaceNodeRestriction) ||
			(inDomain(prefix, "kubernetes.io") || inDomain(prefix, "k8s.io")) && !isKubeletLabel(k) {
			out = append(out, k)
		}
	}
	return out
}

// kubeletLabels are the kubernetes.io labels kubelets set on their Node.
var kubeletLabels = map[string]bool{
	corev1.LabelHostname:                true,
	corev1.LabelTopologyZone:            true,
	corev1.LabelTopologyRegion:          true,
	corev1.LabelFailureDomainBetaZone:   true,
	corev1.LabelFailureDomainBetaRegion: true,
	corev1.LabelInstanceType:            true,
	corev1.LabelInstanceTypeStable:      true,
	corev1.LabelOSStable:                true,
	corev1.LabelArchStable:              true,
	"beta.kubernetes.io/os":             true,
	"beta.kubernetes.io/arch":           true,
}

// isKubeletLabel: one of kubeletLabels, or a label of the
// kubelet.kubernetes.io or node.kubernetes.io domains.
func isKubeletLabel(key string) bool {
	if kubeletLabels[key] {
		return true
	}
	prefix := labelPrefix(key)
	return inDomain(prefix, corev1.LabelNamespaceSuffixKubelet) || inDomain(prefix, corev1.LabelNamespaceSuffixNode)
}

// labelPrefix is the part of a label key before its first "/", or "".
func labelPrefix(key string) string {
	prefix, _, found := strings.Cut(key, "/")
	if !found {
		return ""
	}
	return prefix
}

// inDomain: prefix is domain or one of its subdomains.
func inDomain(prefix, domain string) bool {
	return prefix == domain || strings.HasSuffix(prefix, "."+domain)
}
