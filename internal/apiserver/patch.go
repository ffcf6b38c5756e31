package apiserver

import (
	"encoding/json"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/internal/registry"
)

// Patch media types.
const (
	mediaJSONPatch      = "application/json-patch+json"
	mediaMergePatch     = "application/merge-patch+json"
	mediaStrategicPatch = "application/strategic-merge-patch+json"
	mediaApplyPatch     = "application/apply-patch+yaml"
)

func parsePatchOptions(r *http.Request, mt string) (*metav1.PatchOptions, error) {
	opts := &metav1.PatchOptions{}
	if err := decodeOptions(r, opts); err != nil {
		return nil, err
	}
	if errs := metavalidation.ValidatePatchOptions(opts, types.PatchType(mt)); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "", errs)
	}
	return opts, nil
}

func (s *Server) servePatch(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource) {
	mt := mediaTypeOf(r)
	switch {
	case mt == mediaJSONPatch, mt == mediaMergePatch:
	case mt == mediaApplyPatch:
	case mt == mediaStrategicPatch:
		if res.Unstructured {
			writeError(w, r, errUnsupportedMediaType(mt, mediaJSONPatch, mediaMergePatch, mediaApplyPatch))
			return
		}
	case res.Unstructured:
		writeError(w, r, errUnsupportedMediaType(mt, mediaJSONPatch, mediaMergePatch, mediaApplyPatch))
		return
	default:
		writeError(w, r, errUnsupportedMediaType(mt, mediaJSONPatch, mediaMergePatch, mediaStrategicPatch, mediaApplyPatch))
		return
	}
	opts, err := parsePatchOptions(r, mt)
	if err != nil {
		writeError(w, r, err)
		return
	}
	patch, err := s.readBody(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if mt != mediaApplyPatch && !json.Valid(patch) {
		// upstream checks a JSON patch is JSON before reading it
		writeError(w, r, errBadRequest("invalid JSON patch"))
		return
	}
	s.keepRequestPatch(rq, mt, patch)
	uopts := &metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "UpdateOptions"},
		DryRun: opts.DryRun, FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation}
	if rq.info.Subresource == "scale" {
		next := scalePatcher(rq, res, mt, patch, opts.FieldValidation)
		if mt == mediaApplyPatch {
			if next, err = s.scaleApplier(rq, res, patch, opts); err != nil {
				writeError(w, r, err)
				return
			}
		}
		s.finishScaleWrite(w, r, rq, res, next, uopts)
		return
	}
	next := func(current runtime.Object) (runtime.Object, error) {
		if current == nil {
			return nil, errNotFound(res, rq.info.Name)
		}
		obj, err := applyPatch(rq, res, mt, patch, current, opts.FieldValidation)
		if err != nil {
			return nil, err
		}
		// as upstream, a patch may not rename the object
		if err := checkBodyName(accessor(obj).GetName(), rq.info.Name); err != nil {
			return nil, err
		}
		return obj, nil
	}
	if mt == mediaApplyPatch {
		if next, err = s.applyTransform(rq, res, patch, opts); err != nil {
			writeError(w, r, err)
			return
		}
	}
	ctx, timedOut, cancel := writeDeadline(r.Context())
	defer cancel()
	out, created, err := s.update(ctx, rq, res, next, uopts)
	if err = timedOut(err); err != nil {
		writeError(w, r, err)
		return
	}
	rq.event.ResponseObject = out
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	s.writeResult(w, r, code, res, out)
}

// keepRequestPatch records the patch as the request object of the audit
// event, in JSON (an apply patch's YAML converted), as upstream does; a
// patch that is not JSON (nor YAML) is left out, and refused later.
func (s *Server) keepRequestPatch(rq *request, mt string, patch []byte) {
	if !s.cfg.KeepRequestObjects {
		return
	}
	raw := patch
	if mt == mediaApplyPatch {
		var err error
		if raw, err = yaml.YAMLToJSON(patch); err != nil {
			return
		}
	}
	if json.Valid(raw) {
		rq.event.RequestObject = &runtime.Unknown{Raw: raw, ContentType: runtime.ContentTypeJSON}
	}
}
