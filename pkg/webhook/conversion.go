package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Converter converts custom resources between the versions of their
// definition: the work of a CRD's conversion webhook. Convert returns obj
// in apiVersion toVersion ("<group>/<version>"). It must not change
// metadata other than labels and annotations (the API server refuses
// such answers). SchemeConverter is a Converter for typed versions with a
// hub, as controller-runtime's.
type Converter interface {
	Convert(ctx context.Context, obj *unstructured.Unstructured, toVersion string) (*unstructured.Unstructured, error)
}

// ConverterFunc adapts a function to a Converter.
type ConverterFunc func(ctx context.Context, obj *unstructured.Unstructured, toVersion string) (*unstructured.Unstructured, error)

// Convert calls f.
func (f ConverterFunc) Convert(ctx context.Context, obj *unstructured.Unstructured, toVersion string) (*unstructured.Unstructured, error) {
	return f(ctx, obj, toVersion)
}

// ServeConversion returns c as an http.Handler with the default Options.
func ServeConversion(c Converter) http.Handler {
	return NewConversionHandler(c, Options{})
}

// NewConversionHandler returns an http.Handler that answers
// ConversionReviews (apiextensions.k8s.io/v1 and v1beta1, answered in the
// version asked, with the request's uid) by converting every object of the
// request with c, in order. An error (or panic) of c fails the whole
// review: its result is Failure with the error's text, which the API
// server reports to its client. Bodies are checked as NewHTTPHandler
// checks them (415, 413, and 400 for what is not a review with a
// request). opts.Registerer's metrics count a review converted as
// "allowed", a failed one as "error".
func NewConversionHandler(c Converter, opts Options) http.Handler {
	h := NewHTTPHandler(nil, opts).(*httpHandler)
	return &conversionHandler{converter: c, http: h}
}

type conversionHandler struct {
	converter Converter
	http      *httpHandler
}

func (h *conversionHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := h.http.opts.Path
	if path == "" {
		path = r.Pattern
	}
	result := resultAborted
	done := h.http.metrics.begin(path)
	defer func() { done(result) }()
	result = h.serve(w, r)
}

func (h *conversionHandler) serve(w http.ResponseWriter, r *http.Request) string {
	log := h.http.opts.Logger
	body, rerr := h.http.readBody(w, r)
	var req *conversionRequest
	if rerr == nil {
		req, rerr = decodeConversionReview(body)
	}
	if rerr != nil {
		log.Debug("conversion review rejected", "path", r.URL.Path, "code", rerr.code, "error", rerr.msg)
		http.Error(w, rerr.msg, rerr.code)
		return resultInvalid
	}
	converted, err := h.convertAll(r.Context(), req, log)
	result := resultAllowed
	status := metav1.Status{Status: metav1.StatusSuccess}
	if err != nil {
		converted, result = nil, resultError
		status = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
	}
	data, err := req.encodeAnswer(converted, status)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return resultError
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
	log.Debug("conversion review answered", "path", r.URL.Path, "uid", req.uid, "objects", len(req.objects), "desiredAPIVersion", req.desired, "result", result)
	return result
}

// convertAll converts the request's objects, turning a panic into an error.
func (h *conversionHandler) convertAll(ctx context.Context, req *conversionRequest, log *slog.Logger) (out []runtime.RawExtension, err error) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			log.Error("conversion webhook panicked", "uid", req.uid, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			out, err = nil, fmt.Errorf("conversion webhook panicked: %v", v)
		}
	}()
	out = make([]runtime.RawExtension, 0, len(req.objects))
	for _, raw := range req.objects {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw.Raw); err != nil {
			return nil, err
		}
		converted, err := h.converter.Convert(ctx, obj, req.desired)
		if err != nil {
			return nil, err
		}
		if converted == nil {
			return nil, errors.New("conversion returned no object")
		}
		data, err := converted.MarshalJSON()
		if err != nil {
			return nil, err
		}
		out = append(out, runtime.RawExtension{Raw: data})
	}
	return out, nil
}

// conversionRequest is a ConversionReview's request, of either version.
type conversionRequest struct {
	v1beta1 bool
	uid     types.UID
	desired string
	objects []runtime.RawExtension
}

func decodeConversionReview(body []byte) (*conversionRequest, *requestError) {
	var head metav1.TypeMeta
	if err := json.Unmarshal(body, &head); err != nil {
		return nil, &requestError{http.StatusBadRequest, "Request could not be decoded: " + err.Error()}
	}
	switch head.GroupVersionKind() {
	case apiextensionsv1.SchemeGroupVersion.WithKind("ConversionReview"):
		var review apiextensionsv1.ConversionReview
		if err := json.Unmarshal(body, &review); err != nil {
			return nil, &requestError{http.StatusBadRequest, "Request could not be decoded: " + err.Error()}
		}
		if review.Request == nil {
			return nil, &requestError{http.StatusBadRequest, "ConversionReview has no request"}
		}
		return &conversionRequest{uid: review.Request.UID, desired: review.Request.DesiredAPIVersion, objects: review.Request.Objects}, nil
	case apiextensionsv1beta1.SchemeGroupVersion.WithKind("ConversionReview"):
		var review apiextensionsv1beta1.ConversionReview
		if err := json.Unmarshal(body, &review); err != nil {
			return nil, &requestError{http.StatusBadRequest, "Request could not be decoded: " + err.Error()}
		}
		if review.Request == nil {
			return nil, &requestError{http.StatusBadRequest, "ConversionReview has no request"}
		}
		return &conversionRequest{v1beta1: true, uid: review.Request.UID, desired: review.Request.DesiredAPIVersion, objects: review.Request.Objects}, nil
	}
	return nil, &requestError{http.StatusBadRequest, fmt.Sprintf("Unsupported group version kind: %v", head.GroupVersionKind())}
}

// encodeAnswer is the review answering r, in r's version.
func (r *conversionRequest) encodeAnswer(objects []runtime.RawExtension, result metav1.Status) ([]byte, error) {
	if r.v1beta1 {
		return json.Marshal(&apiextensionsv1beta1.ConversionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: apiextensionsv1beta1.SchemeGroupVersion.String(), Kind: "ConversionReview"},
			Response: &apiextensionsv1beta1.ConversionResponse{UID: r.uid, ConvertedObjects: objects, Result: result},
		})
	}
	return json.Marshal(&apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "ConversionReview"},
		Response: &apiextensionsv1.ConversionResponse{UID: r.uid, ConvertedObjects: objects, Result: result},
	})
}
