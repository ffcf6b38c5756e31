package quota

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// legacyAliases are the object counts that also go by an older name.
var legacyAliases = map[schema.GroupResource]corev1.ResourceName{
	{Resource: "configmaps"}:             corev1.ResourceConfigMaps,
	{Resource: "resourcequotas"}:         corev1.ResourceQuotas,
	{Resource: "replicationcontrollers"}: corev1.ResourceReplicationControllers,
	{Resource: "secrets"}:                corev1.ResourceSecrets,
}

// ignored are the resources quota never evaluates (kube-apiserver's list).
var ignored = map[schema.GroupResource]bool{
	{Resource: "bindings"}:                                                 true,
	{Resource: "componentstatuses"}:                                        true,
	{Resource: "events"}:                                                   true,
	{Group: "events.k8s.io", Resource: "events"}:                           true,
	{Group: "authentication.k8s.io", Resource: "tokenreviews"}:             true,
	{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}:       true,
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}:      true,
	{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}:  true,
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}: true,
	{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"}:   true,
}

// Ignored reports whether quota never evaluates gr.
func Ignored(gr schema.GroupResource) bool { return ignored[gr] }

// Registry holds the evaluator of each resource: pods, services,
// persistent volume claims and resource claims have their own; any other
// resource gets an object count on first use.
type Registry struct {
	mu    sync.RWMutex
	evals map[schema.GroupResource]Evaluator
}

// NewRegistry returns the registry of kube-apiserver's evaluators.
func NewRegistry(opts Options) *Registry {
	r := &Registry{evals: map[schema.GroupResource]Evaluator{}}
	for _, e := range []Evaluator{NewPods(opts), NewServices(), NewClaims(opts), NewResourceClaims()} {
		r.evals[e.GroupResource()] = e
	}
	for gr, alias := range legacyAliases {
		r.evals[gr] = NewObjectCount(gr, alias)
	}
	return r
}

// For returns the evaluator of gr, adding an object count for a resource
// seen the first time; nil for an ignored resource.
func (r *Registry) For(gr schema.GroupResource) Evaluator {
	if ignored[gr] {
		return nil
	}
	r.mu.RLock()
	e := r.evals[gr]
	r.mu.RUnlock()
	if e != nil {
		return e
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e = r.evals[gr]; e == nil {
		e = NewObjectCount(gr, "")
		r.evals[gr] = e
	}
	return e
}

// Tracked returns the resources whose evaluators track any of names: those
// registered, and each count/<resource>.<group> names.
func (r *Registry) Tracked(names []corev1.ResourceName) []schema.GroupResource {
	seen := map[schema.GroupResource]bool{}
	var out []schema.GroupResource
	add := func(gr schema.GroupResource) {
		if !seen[gr] && !ignored[gr] {
			seen[gr] = true
			out = append(out, gr)
		}
	}
	r.mu.RLock()
	for gr, e := range r.evals {
		if len(e.MatchingResources(names)) > 0 {
			add(gr)
		}
	}
	r.mu.RUnlock()
	for _, n := range names {
		if gr, ok := countedResource(n); ok {
			add(gr)
		}
	}
	return out
}

// countedResource is the resource a count/<resource>[.<group>] name counts.
func countedResource(n corev1.ResourceName) (schema.GroupResource, bool) {
	s := string(n)
	if len(s) <= len("count/") || s[:len("count/")] != "count/" {
		return schema.GroupResource{}, false
	}
	return schema.ParseGroupResource(s[len("count/"):]), true
}
