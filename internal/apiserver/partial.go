package apiserver

import (
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
)

// Metadata-only responses (PartialObjectMetadata and its list), which
// client-go's metadata client and metadata informers ask for.

// partialOf is obj's metadata as a PartialObjectMetadata of version.
func partialOf(obj runtime.Object, version string) *metav1.PartialObjectMetadata {
	p := meta.AsPartialObjectMetadata(accessor(obj))
	p.TypeMeta = metav1.TypeMeta{APIVersion: metav1.GroupName + "/" + version, Kind: asPartial}
	return p
}

// partialList is the metadata of items as a PartialObjectMetadataList of
// version, with the list's metadata lm.
func partialList(items []runtime.Object, lm metav1.ListMeta, version string) runtime.Object {
	parts := make([]metav1.PartialObjectMetadata, 0, len(items))
	for _, it := range items {
		parts = append(parts, *partialOf(it, version))
	}
	return partialListOf(parts, lm, version)
}

// partialListOf is the PartialObjectMetadataList of parts, in the version
// asked for.
func partialListOf(parts []metav1.PartialObjectMetadata, lm metav1.ListMeta, version string) runtime.Object {
	tm := metav1.TypeMeta{APIVersion: metav1.GroupName + "/" + version, Kind: asPartialList}
	if version == "v1beta1" {
		return &metav1beta1.PartialObjectMetadataList{TypeMeta: tm, ListMeta: lm, Items: parts}
	}
	return &metav1.PartialObjectMetadataList{TypeMeta: tm, ListMeta: lm, Items: parts}
}

// transformObject turns one object into what n asks for: itself, its
// Table row or its metadata; a list kind is refused with upstream's 406.
func (s *Server) transformObject(r *http.Request, res *registry.Resource, n negotiated, obj runtime.Object) (any, error) {
	switch n.as {
	case asTable:
		t := s.tableFor(res, []runtime.Object{obj}, "", tableIncludeObject(r))
		asTableVersion(t, n)
		t.ResourceVersion = accessor(obj).GetResourceVersion() // upstream's, as for a list
		return t, nil
	case asPartial:
		return partialOf(obj, n.version), nil
	case asPartialList:
		return nil, errNotAcceptable(fmt.Sprintf("you requested PartialObjectMetadataList, but the requested object is not a list (*%s.%s)", internalPackage(res), res.Kind))
	}
	return obj, nil
}

// transformList is transformObject for a list response.
func (s *Server) transformList(r *http.Request, res *registry.Resource, n negotiated, items []runtime.Object, lm metav1.ListMeta) (any, error) {
	switch n.as {
	case asTable:
		t := s.tableFor(res, items, "", tableIncludeObject(r))
		t.ListMeta = lm
		asTableVersion(t, n)
		return t, nil
	case asPartialList:
		return partialList(items, lm, n.version), nil
	case asPartial:
		typ := "*unstructured.UnstructuredList"
		if !res.Unstructured {
			typ = "*" + internalPackage(res) + "." + res.ListKind
		}
		return nil, errNotAcceptable(fmt.Sprintf("you requested PartialObjectMetadata, but the requested object is a list (%s)", typ))
	}
	for _, it := range items {
		if !res.Unstructured {
			it.GetObjectKind().SetGroupVersionKind(emptyGVK)
		}
	}
	if n.media == mediaProtobuf && !res.Unstructured {
		return typedList(res, items, lm)
	}
	if items == nil {
		items = []runtime.Object{}
	}
	return &listResponse{Kind: res.ListKind, APIVersion: res.GroupVersion().String(), Metadata: listMetadata(res, lm), Items: items}, nil
}

// internalPackage names the Go package of kube-apiserver's internal types
// of res's group, which its 406 messages print.
func internalPackage(res *registry.Resource) string {
	if res.Unstructured && res.Group != "" {
		return "unstructured"
	}
	return internalGroupPackage(res.Group)
}

// internalGroupPackage names the Go package of a built-in group's internal
// types: core for the core group (and events.k8s.io), else the group's
// first label (apps, batch, rbac, networking).
func internalGroupPackage(group string) string {
	switch group {
	case "", "events.k8s.io":
		return "core"
	case "internal.apiserver.k8s.io":
		return "apiserverinternal"
	}
	first, _, _ := strings.Cut(group, ".")
	return first
}

// writeNegotiated writes a response (the object, or what it was turned
// into) in the media type negotiated for its endpoint, n's.
func writeNegotiated(w http.ResponseWriter, r *http.Request, code int, n negotiated, obj any) {
	setWarnings(w, requestFrom(r.Context()))
	if !writeUnlessJSON(w, code, n.media, obj) {
		writeJSON(w, code, obj)
	}
}
