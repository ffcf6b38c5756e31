// Package podnodeselector is the PodNodeSelector admission plugin: a Pod
// created in a namespace gets the namespace's node selector (annotation
// scheduler.alpha.kubernetes.io/node-selector, else the cluster default of
// the plugin configuration) merged into its own, and is refused when the
// two conflict or when its node selector leaves the namespace's whitelist.
//
// It reads namespaces through the plugin context; it does not look at
// nodes.
package podnodeselector

import (
	"context"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/admitd/admitd/pkg/admission"
)

// Name is the upstream plugin name.
const Name = "PodNodeSelector"

// NodeSelectorAnnotation is the namespace annotation holding the
// namespace's node selector ("k=v,k2=v2").
const NodeSelectorAnnotation = "scheduler.alpha.kubernetes.io/node-selector"

// ClusterDefaultKey is the configuration key of the node selector of
// namespaces without the annotation; every other key is a namespace
// whose whitelist it holds.
const ClusterDefaultKey = "clusterDefaultNodeSelector"

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		if pc.Namespaces == nil {
			return nil, fmt.Errorf("missing namespaceLister")
		}
		return New(ReadConfiguration(pc.Config), pc.Namespaces), nil
	})
}

// Plugin is the PodNodeSelector plugin.
type Plugin struct {
	selectors  map[string]string
	namespaces admission.NamespaceLookup
}

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
)

// New returns the plugin with the configuration's selectors (see
// ClusterDefaultKey), reading namespaces from ns.
func New(selectors map[string]string, ns admission.NamespaceLookup) *Plugin {
	return &Plugin{selectors: selectors, namespaces: ns}
}

// ReadConfiguration reads the legacy, unversioned configuration:
//
//	podNodeSelectorPluginConfig:
//	  clusterDefaultNodeSelector: "env=prod"
//	  ns1: "env=dev"
//
// as upstream does: the first YAML or JSON document that decodes (field
// names matched case-insensitively), documents that do not decode skipped;
// nil gives none.
func ReadConfiguration(r io.Reader) map[string]string {
	var cfg struct {
		PodNodeSelectorPluginConfig map[string]string
	}
	if r == nil {
		return nil
	}
	d := yaml.NewYAMLOrJSONDecoder(r, 4096)
	// Upstream retries forever on an error that does not advance the
	// stream (malformed JSON); give up after a bounded number of them.
	for failures := 0; failures < 1000; failures++ {
		if err := d.Decode(&cfg); err == nil || err == io.EOF {
			break
		}
	}
	return cfg.PodNodeSelectorPluginConfig
}

// Handles CREATE.
func (*Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

func podOf(a *admission.Attributes) *corev1.Pod {
	if a.Resource.Group != "" || a.Resource.Resource != "pods" || a.Subresource != "" {
		return nil
	}
	pod, _ := a.Object.(*corev1.Pod)
	return pod
}

// Admit merges the namespace's node selector into the pod's, then
// validates.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	pod := podOf(a)
	if pod == nil {
		return nil
	}
	nsSelector, err := p.namespaceSelector(ctx, a.Namespace)
	if err != nil {
		return err
	}
	if labels.Conflicts(nsSelector, labels.Set(pod.Spec.NodeSelector)) {
		return conflict(a, pod)
	}
	pod.Spec.NodeSelector = labels.Merge(nsSelector, pod.Spec.NodeSelector)
	return p.Validate(ctx, a)
}

// Validate refuses a pod whose node selector conflicts with its
// namespace's or is not within the namespace's whitelist.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	pod := podOf(a)
	if pod == nil {
		return nil
	}
	nsSelector, err := p.namespaceSelector(ctx, a.Namespace)
	if err != nil {
		return err
	}
	if labels.Conflicts(nsSelector, labels.Set(pod.Spec.NodeSelector)) {
		return conflict(a, pod)
	}
	whitelist, err := labels.ConvertSelectorToLabelsMap(p.selectors[a.Namespace])
	if err != nil {
		return err
	}
	if !within(pod.Spec.NodeSelector, whitelist) {
		return apierrors.NewForbidden(a.Resource.GroupResource(), pod.Name, fmt.Errorf("pod node label selector labels conflict with its namespace whitelist"))
	}
	return nil
}

// conflict is named after the pod's own name (empty with generateName), as
// upstream names it.
func conflict(a *admission.Attributes, pod *corev1.Pod) error {
	return apierrors.NewForbidden(a.Resource.GroupResource(), pod.Name, fmt.Errorf("pod node label selector conflicts with its namespace node label selector"))
}

// namespaceSelector is the namespace's annotation, else the cluster
// default. A namespace that does not exist is an internal error, as
// upstream's live lookup reports it.
func (p *Plugin) namespaceSelector(ctx context.Context, name string) (labels.Set, error) {
	ns, err := p.namespaces.GetNamespace(ctx, name)
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewInternalError(fmt.Errorf("namespace %s does not exist", name))
	}
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if v, ok := ns.Annotations[NodeSelectorAnnotation]; ok {
		return labels.ConvertSelectorToLabelsMap(v)
	}
	return labels.ConvertSelectorToLabelsMap(p.selectors[ClusterDefaultKey])
}

// within reports whether every label of sub has the same value in super;
// an empty super allows anything.
func within(sub, super labels.Set) bool {
	if len(super) == 0 {
		return true
	}
	for k, v := range sub {
		if w, ok := super[k]; !ok || w != v {
			return false
		}
	}
	return true
}
