package lint

import (
	"context"
	"fmt"
	"strings"
	"sync"

	v1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/match"
)

// probe is a request the control plane depends on, tried against a
// webhook's scope with the real matcher.
type probe struct {
	what  string // how the finding names it
	attrs admission.Attributes
}

// lintInterception reports the webhooks whose rules and selectors let them
// intercept requests the cluster needs to heal itself.
func lintInterception(s *Set, h *hook) []Finding {
	var out []Finding
	sev := h.riskSeverity()
	if what, ok := interceptsNamespace(s, h, "kube-system"); ok {
		out = append(out, h.finding(InterceptsKubeSystem, sev, h.field("namespaceSelector"),
			fmt.Sprintf("webhook %q can intercept %s in kube-system (failurePolicy %s)", h.name, what, h.failurePolicy)))
	}
	svc := h.client.Service
	if svc != nil {
		if what, ok := interceptsNamespace(s, h, svc.Namespace); ok {
			out = append(out, h.finding(InterceptsOwnNamespace, sev, h.field("namespaceSelector"),
				fmt.Sprintf("webhook %q can intercept %s in %s, the namespace of its service %s/%s (failurePolicy %s)",
					h.name, what, svc.Namespace, svc.Namespace, svc.Name, h.failurePolicy)))
		}
	}
	out = append(out, interceptsResource(s, h, InterceptsLeases, leaseProbes())...)
	out = append(out, interceptsResource(s, h, InterceptsNodes, nodeProbes())...)
	if svc != nil {
		out = append(out, interceptsResource(s, h, InterceptsOwnEndpoints, endpointProbes(s, svc))...)
	}
	return out
}

// interceptsResource reports rule id when h intercepts one of probes.
func interceptsResource(s *Set, h *hook, id string, probes []probe) []Finding {
	p, ok := firstIntercepted(s, h, probes)
	if !ok {
		return nil
	}
	return []Finding{h.finding(id, h.riskSeverity(), h.field("rules"),
		fmt.Sprintf("webhook %q can intercept %s (failurePolicy %s)", h.name, p.what, h.failurePolicy))}
}

// interceptsNamespace reports whether some rule of h matches a request in
// namespace ns, and names the first resource it would intercept there.
func interceptsNamespace(s *Set, h *hook, ns string) (string, bool) {
	var probes []probe
	for _, r := range h.rules {
		probes = append(probes, ruleProbes(r, ns)...)
	}
	p, ok := firstIntercepted(s, h, probes)
	return p.what, ok
}

// ruleProbes turns one rule into namespaced requests it covers: one per
// group and resource pattern, with wildcards replaced by a namespaced
// resource.
func ruleProbes(r v1.RuleWithOperations, ns string) []probe {
	version := first(r.APIVersions, "v1")
	op := admission.Create
	if len(r.Operations) > 0 && r.Operations[0] != v1.OperationAll {
		op = admission.Operation(r.Operations[0])
	}
	var out []probe
	for _, group := range r.APIGroups {
		if group == "*" {
			group = ""
		}
		for _, pattern := range r.Resources {
			if p, ok := resourceProbe(group, version, pattern, op, ns); ok {
				out = append(out, p)
			}
		}
	}
	return out
}

// resourceProbe is a request in ns on group/version/pattern, unless the
// resource is cluster-scoped.
func resourceProbe(group, version, pattern string, op admission.Operation, ns string) (probe, bool) {
	res, sub, _ := strings.Cut(pattern, "/")
	if res == "*" {
		res = "pods"
		if group != "" {
			res = "lintprobes"
		}
	}
	if sub == "*" {
		sub = ""
	}
	if clusterScoped[schema.GroupResource{Group: group, Resource: res}] || clusterScopedGroups[group] {
		return probe{}, false
	}
	what := res
	if sub != "" {
		what += "/" + sub
	}
	if group != "" {
		what += "." + group
	}
	gvr := schema.GroupVersionResource{Group: group, Version: version, Resource: res}
	return newProbe(what, op, gvr, sub, ns, "lint-probe", nil), true
}

func first(values []string, wildcard string) string {
	if len(values) == 0 || values[0] == "*" {
		return wildcard
	}
	return values[0]
}

// leaseProbes and nodeProbes are the same for every webhook (Match only
// reads them), made on first use.
var leaseProbes, nodeProbes = sync.OnceValue(newLeaseProbes), sync.OnceValue(newNodeProbes)

func newLeaseProbes() []probe {
	gvr := schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
	var out []probe
	for _, op := range []admission.Operation{admission.Update, admission.Create} {
		out = append(out,
			newProbe("leases.coordination.k8s.io (node heartbeats in kube-node-lease)", op, gvr, "", "kube-node-lease", "node-1", nil),
			newProbe("leases.coordination.k8s.io (leader election in kube-system)", op, gvr, "", "kube-system", "kube-controller-manager", nil))
	}
	return out
}

func newNodeProbes() []probe {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	lbls := map[string]string{"kubernetes.io/hostname": "node-1", "kubernetes.io/os": "linux"}
	return []probe{
		newProbe("nodes", admission.Update, gvr, "", "", "node-1", lbls),
		newProbe("nodes/status", admission.Update, gvr, "status", "", "node-1", lbls),
		newProbe("nodes", admission.Create, gvr, "", "", "node-1", lbls),
	}
}

// endpointProbes are the writes of the endpoints controllers for the
// webhook's own Service; their objects carry the Service's labels.
func endpointProbes(s *Set, ref *v1.ServiceReference) []probe {
	lbls := map[string]string{}
	for _, svc := range s.Services {
		if svc.Namespace == ref.Namespace && svc.Name == ref.Name {
			for k, v := range svc.Labels {
				lbls[k] = v
			}
		}
	}
	slice := map[string]string{"kubernetes.io/service-name": ref.Name, "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}
	for k, v := range lbls {
		slice[k] = v
	}
	own := fmt.Sprintf(" of its service %s/%s", ref.Namespace, ref.Name)
	ep := schema.GroupVersionResource{Version: "v1", Resource: "endpoints"}
	eps := schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
	var out []probe
	for _, op := range []admission.Operation{admission.Update, admission.Create} {
		out = append(out,
			newProbe("endpointslices.discovery.k8s.io"+own, op, eps, "", ref.Namespace, ref.Name+"-abcde", slice),
			newProbe("endpoints"+own, op, ep, "", ref.Namespace, ref.Name, lbls))
	}
	return out
}

func newProbe(what string, op admission.Operation, gvr schema.GroupVersionResource, sub, ns, name string, lbls map[string]string) probe {
	obj := &unstructured.Unstructured{}
	obj.SetName(name)
	obj.SetNamespace(ns)
	obj.SetLabels(lbls)
	a := admission.Attributes{Name: name, Namespace: ns, Resource: gvr, Subresource: sub, Operation: op,
		Kind: gvr.GroupVersion().WithKind(kindOf(gvr.Resource))}
	switch op {
	case admission.Create:
		a.Object = obj
	case admission.Update:
		a.Object, a.OldObject = obj, obj.DeepCopy()
	case admission.Delete:
		a.OldObject = obj
	}
	return probe{what: what, attrs: a}
}

// firstIntercepted returns the first probe h matches (or fails on, which
// rejects the request too).
func firstIntercepted(s *Set, h *hook, probes []probe) (probe, bool) {
	env := match.Env{Namespaces: s.namespaceLookup(), Equivalents: versionEquivalents{}}
	for _, p := range probes {
		if match.WebhookExemption(&p.attrs, true) != match.NotExempt {
			continue
		}
		r := match.NewRequest(context.Background(), env, &p.attrs)
		if d := h.criteria.Match(&r); d.Reason == match.Matched || d.Reason == match.Errored {
			return p, true
		}
	}
	return probe{}, false
}

// namespaceLookup serves the set's namespaces; any other namespace has
// the one label the API server gives every namespace.
type namespaceLookup map[string]*corev1.Namespace

// namespaceLookup returns the set's lookup, built on first use.
func (s *Set) namespaceLookup() namespaceLookup {
	if s.namespaces == nil {
		s.namespaces = namespaceLookup{}
		for _, ns := range s.Namespaces {
			s.namespaces[ns.Name] = ns
		}
	}
	return s.namespaces
}

func (l namespaceLookup) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	if ns, ok := l[name]; ok {
		return ns, nil
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{corev1.LabelMetadataName: name}}}
	l[name] = ns
	return ns, nil
}

// versionEquivalents makes every version of a group and resource
// equivalent, the worst case of matchPolicy Equivalent when the served
// versions are not known.
type versionEquivalents struct{}

var probeVersions = []string{"v1", "v1beta1", "v1alpha1", "v2", "v1beta2", "v1alpha2", "v1alpha3"}

func (versionEquivalents) EquivalentResourcesFor(gvr schema.GroupVersionResource, _ string) []schema.GroupVersionResource {
	out := make([]schema.GroupVersionResource, len(probeVersions))
	for i, v := range probeVersions {
		out[i] = schema.GroupVersionResource{Group: gvr.Group, Version: v, Resource: gvr.Resource}
	}
	return out
}

func (versionEquivalents) KindFor(gvr schema.GroupVersionResource, _ string) schema.GroupVersionKind {
	return gvr.GroupVersion().WithKind(kindOf(gvr.Resource))
}

// kindOf guesses a kind from a resource name, for probes only.
func kindOf(resource string) string {
	switch resource {
	case "endpoints":
		return "Endpoints"
	case "endpointslices":
		return "EndpointSlice"
	}
	k := strings.TrimSuffix(resource, "s")
	if k == "" {
		return "Unknown"
	}
	return strings.ToUpper(k[:1]) + k[1:]
}

// clusterScopedGroups are the built-in API groups without a namespaced
// resource.
var clusterScopedGroups = map[string]bool{
	"admissionregistration.k8s.io": true, "apiextensions.k8s.io": true, "apiregistration.k8s.io": true,
	"scheduling.k8s.io": true, "node.k8s.io": true, "flowcontrol.apiserver.k8s.io": true,
}

// clusterScoped are the built-in cluster-scoped resources, which a
// namespaceSelector never sees.
var clusterScoped = map[schema.GroupResource]bool{}

func init() {
	for _, gr := range []string{
		"nodes", "namespaces", "persistentvolumes", "componentstatuses",
		"clusterroles.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io",
		"customresourcedefinitions.apiextensions.k8s.io", "apiservices.apiregistration.k8s.io",
		"storageclasses.storage.k8s.io", "csidrivers.storage.k8s.io", "csinodes.storage.k8s.io",
		"volumeattachments.storage.k8s.io", "volumeattributesclasses.storage.k8s.io",
		"priorityclasses.scheduling.k8s.io", "runtimeclasses.node.k8s.io", "ingressclasses.networking.k8s.io",
		"ipaddresses.networking.k8s.io", "servicecidrs.networking.k8s.io",
		"certificatesigningrequests.certificates.k8s.io", "clustertrustbundles.certificates.k8s.io",
		"flowschemas.flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations.flowcontrol.apiserver.k8s.io",
		"deviceclasses.resource.k8s.io", "resourceslices.resource.k8s.io",
		"mutatingwebhookconfigurations.admissionregistration.k8s.io",
		"validatingwebhookconfigurations.admissionregistration.k8s.io",
		"validatingadmissionpolicies.admissionregistration.k8s.io",
		"validatingadmissionpolicybindings.admissionregistration.k8s.io",
		"mutatingadmissionpolicies.admissionregistration.k8s.io",
		"mutatingadmissionpolicybindings.admissionregistration.k8s.io",
	} {
		clusterScoped[schema.ParseGroupResource(gr)] = true
	}
}
