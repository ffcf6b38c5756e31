package apiserver

import (
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/admitd/admitd/internal/registry"
)

// Server-side apply on /scale, as upstream's scale handlers: the parent's
// managedFields are translated to the Scale's (the managers of the
// replicas field own .spec.replicas of the Scale), the configuration is
// applied to the Scale by a field manager of autoscaling/v1 Scale, and the
// Scale's managers are translated back onto the parent's replicas field,
// with the parent's apiVersion and subresource "scale".

// scaleApplier returns the transform of an apply on res's /scale.
func (s *Server) scaleApplier(rq *request, res *registry.Resource, patch []byte, opts *metav1.PatchOptions) (transform, error) {
	cfg, err := decodeApplyConfiguration(patch)
	if err != nil {
		return nil, err
	}
	fm, err := s.fields.get(scaleResource, "scale")
	if err != nil {
		return nil, err
	}
	rq.apply = true
	force := opts.Force != nil && *opts.Force
	mappings := managedfields.ResourcePathMappings{res.GroupVersion().String(): replicasPath(res)}
	return func(current runtime.Object) (runtime.Object, error) {
		if current == nil {
			return nil, errNotFound(res, rq.info.Name)
		}
		fields := managedfields.NewScaleHandler(accessor(current).GetManagedFields(), res.GroupVersion(), mappings)
		sc, err := toScale(res, current)
		if err != nil {
			return nil, err
		}
		if sc.ManagedFields, err = fields.ToSubresource(); err != nil {
			return nil, err
		}
		applied, err := fm.Apply(sc, cfg.DeepCopy(), opts.FieldManager, force)
		if err != nil {
			return nil, err
		}
		if err := strictApply(rq, patch, opts.FieldValidation); err != nil {
			return nil, err
		}
		newScale, ok := applied.(*autoscalingv1.Scale)
		if !ok {
			return nil, fmt.Errorf("applying to a Scale gave a %T", applied)
		}
		if newScale.Name != rq.info.Name {
			return nil, errBadRequest("the name of the object (%s) does not match the name on the URL (%s)", newScale.Name, rq.info.Name)
		}
		out, err := withReplicas(res, current, newScale)
		if err != nil {
			return nil, err
		}
		parentFields, err := fields.ToParent(newScale.ManagedFields)
		if err != nil {
			return nil, err
		}
		accessor(out).SetManagedFields(parentFields)
		return out, nil
	}, nil
}

// replicasPath is the field of res's objects the Scale's spec.replicas is.
func replicasPath(res *registry.Resource) fieldpath.Path {
	var elems []any
	for _, p := range pathsFor(res).spec {
		elems = append(elems, p)
	}
	return fieldpath.MakePathOrDie(elems...)
}
