package apiserver

import (
	"fmt"
	"net/http"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
)

// The scale subresource reads and writes an object's replica count as an
// autoscaling/v1 Scale. Admission sees Scale objects, as upstream.

var scaleKind = autoscalingv1.SchemeGroupVersion.WithKind("Scale")

// scalePaths locates replicas and the selector in an object's content.
type scalePaths struct {
	spec, status []string
	selector     []string // status (custom resources) or spec.selector (built-in)
	labelSel     bool     // selector is a LabelSelector to format
}

func pathsFor(res *registry.Resource) scalePaths {
	if res.Unstructured {
		return scalePaths{spec: res.ScaleSpecReplicasPath, status: res.ScaleStatusReplicasPath, selector: res.ScaleLabelSelectorPath}
	}
	return scalePaths{spec: []string{"spec", "replicas"}, status: []string{"status", "replicas"}, selector: []string{"spec", "selector"},
		labelSel: res.Resource != "replicationcontrollers"}
}

// toScale describes obj's replicas as a Scale.
func toScale(res *registry.Resource, obj runtime.Object) (*autoscalingv1.Scale, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	p := pathsFor(res)
	m := accessor(obj)
	sc := &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{APIVersion: scaleKind.GroupVersion().String(), Kind: scaleKind.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
			ResourceVersion: m.GetResourceVersion(), CreationTimestamp: m.GetCreationTimestamp()},
	}
	if v, ok, _ := unstructured.NestedFieldNoCopy(content, p.spec...); ok {
		sc.Spec.Replicas = int32(toInt64(v))
	}
	if v, ok, _ := unstructured.NestedFieldNoCopy(content, p.status...); ok {
		sc.Status.Replicas = int32(toInt64(v))
	}
	sc.Status.Selector = selectorString(content, p)
	return sc, nil
}

func selectorString(content map[string]any, p scalePaths) string {
	if len(p.selector) == 0 {
		return ""
	}
	v, ok, _ := unstructured.NestedFieldNoCopy(content, p.selector...)
	if !ok {
		return ""
	}
	if s, isString := v.(string); isString {
		return s
	}
	m, _ := v.(map[string]any)
	if !p.labelSel {
		var parts []string
		for k, val := range m {
			parts = append(parts, fmt.Sprintf("%s=%v", k, val))
		}
		return strings.Join(parts, ",")
	}
	var sel metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &sel); err != nil {
		return ""
	}
	return metav1.FormatLabelSelector(&sel)
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int32:
		return int64(n)
	}
	return 0
}

// checkScaleUID refuses a Scale that names another uid than its object's,
// as the scale storage of upstream's built-in kinds does after admission
// and the Scale's validation (a custom resource's does not look).
func checkScaleUID(res *registry.Resource, obj runtime.Object, sc *autoscalingv1.Scale) error {
	uid := accessor(obj).GetUID()
	if res.Unstructured || sc.UID == "" || sc.UID == uid {
		return nil
	}
	return apierrors.NewConflict(schema.GroupResource{Group: res.Group, Resource: res.Resource + "/scale"}, accessor(obj).GetName(),
		fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", sc.UID, uid))
}

// withReplicas returns a copy of obj whose desired replicas are sc's.
func withReplicas(res *registry.Resource, obj runtime.Object, sc *autoscalingv1.Scale) (runtime.Object, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	if err := unstructured.SetNestedField(content, int64(sc.Spec.Replicas), pathsFor(res).spec...); err != nil {
		return nil, err
	}
	out, err := layout.NewObject(res)
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, out); err != nil {
		return nil, err
	}
	accessor(out).SetResourceVersion(sc.ResourceVersion)
	return out, nil
}

func validateScale(sc *autoscalingv1.Scale) error {
	if sc.Spec.Replicas >= 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: "autoscaling", Kind: "Scale"}, sc.Name, field.ErrorList{
		field.Invalid(field.NewPath("spec", "replicas"), sc.Spec.Replicas, "must be greater than or equal to 0")})
}

// serveGetScale answers GET .../scale.
func (s *Server) serveGetScale(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource) {
	obj, err := s.getObject(r.Context(), res, rq.info.Namespace, rq.info.Name)
	if err == nil {
		var sc *autoscalingv1.Scale
		if sc, err = toScale(res, obj); err == nil {
			s.writeScale(w, r, res, sc)
			return
		}
	}
	writeError(w, r, err)
}

// serveUpdateScale answers PUT .../scale.
func (s *Server) serveUpdateScale(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource, opts *metav1.UpdateOptions) {
	data, err := s.readBody(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	body, err := decodeScale(rq, mediaTypeOf(r), data, opts.FieldValidation)
	if err == nil {
		err = checkBodyName(body.Name, rq.info.Name)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	rq.uidPrecondition, rq.scaleUID = body.UID, &body.UID
	next := func(current runtime.Object) (runtime.Object, error) {
		if current == nil {
			return nil, errNotFound(res, rq.info.Name)
		}
		return withReplicas(res, current, body)
	}
	s.finishScaleWrite(w, r, rq, res, next, opts)
}

func (s *Server) finishScaleWrite(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource, next transform, opts *metav1.UpdateOptions) {
	out, _, err := s.update(r.Context(), rq, res, next, opts)
	if err == nil {
		var sc *autoscalingv1.Scale
		if sc, err = toScale(res, out); err == nil {
			s.writeScale(w, r, res, sc)
			return
		}
	}
	writeError(w, r, err)
}

// scaleResource is the Scale kind as a resource, for decoding and patching.
var scaleResource = &registry.Resource{GroupVersionResource: autoscalingv1.SchemeGroupVersion.WithResource("scales"), Kind: "Scale"}

// decodeScale decodes a PUT body as upstream's update handler does: JSON
// and YAML strictly, by fieldValidation.
func decodeScale(rq *request, mt string, data []byte, fieldValidation string) (*autoscalingv1.Scale, error) {
	obj, strictErrs, err := decodeObject(scaleResource, mt, data)
	if err != nil {
		return nil, err
	}
	if err := strictDecoding(rq, fieldValidation, strictErrs); err != nil {
		return nil, cannotBeHandled(scaleResource, err)
	}
	return obj.(*autoscalingv1.Scale), nil
}

// scalePatcher applies a patch to the Scale of the current object and
// returns the object with the patched replicas.
func scalePatcher(rq *request, res *registry.Resource, mt string, patch []byte, fieldValidation string) transform {
	return func(current runtime.Object) (runtime.Object, error) {
		if current == nil {
			return nil, errNotFound(res, rq.info.Name)
		}
		sc, err := toScale(res, current)
		if err != nil {
			return nil, err
		}
		patched, err := applyPatch(rq, scaleResource, mt, patch, sc, fieldValidation)
		if err != nil {
			return nil, err
		}
		patchedScale := patched.(*autoscalingv1.Scale)
		rq.scaleUID = &patchedScale.UID
		return withReplicas(res, current, patchedScale)
	}
}
