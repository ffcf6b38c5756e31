package apiserver

import (
	"bytes"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// Responses in Kubernetes protobuf. Typed clients (client-go's clientsets,
// kubectl's generators) ask for protobuf first and JSON second; upstream
// answers protobuf for every typed object, Status errors and a custom
// resource's Scale included, which is also what those clients decode
// fastest. The rest stays JSON, which every such client accepts: custom
// resource objects (they have no protobuf form; upstream answers 406
// there), tables and partial metadata (asked for with parameters), lists
// and watches.

// wantsProtobuf reports whether the client's preferred media type (highest
// q, earliest on a tie) is Kubernetes protobuf without parameters.
func wantsProtobuf(r *http.Request) bool {
	accept := r.Header.Get("Accept")
	if !strings.Contains(accept, mediaProtobuf) {
		return false
	}
	// Without parameters every type has q=1 and the first wins: typed
	// clients' own "application/vnd.kubernetes.protobuf, */*" and the like
	// need no parsing.
	if first, _, _ := strings.Cut(accept, ","); !strings.Contains(accept, ";") && strings.TrimSpace(first) == mediaProtobuf {
		return true
	}
	bestQ, wants := -1.0, false
	for _, clause := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(clause))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(v, 64); err != nil {
				continue
			}
			delete(params, "q")
		}
		if q > bestQ {
			bestQ, wants = q, mt == mediaProtobuf && len(params) == 0
		}
	}
	return wants && bestQ > 0
}

// writeProtobuf writes obj in Kubernetes protobuf, if it can be: a
// built-in kind with its apiVersion and kind set.
func writeProtobuf(w http.ResponseWriter, code int, obj any) bool {
	ro, ok := obj.(runtime.Object)
	if !ok || ro.GetObjectKind().GroupVersionKind().Kind == "" {
		return false
	}
	if _, unstructured := ro.(runtime.Unstructured); unstructured {
		return false
	}
	var buf bytes.Buffer
	if err := protobufSerializer().Encode(ro, &buf); err != nil {
		return false
	}
	w.Header().Set("Content-Type", mediaProtobuf)
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
	return true
}
