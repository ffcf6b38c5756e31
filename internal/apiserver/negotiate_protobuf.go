package apiserver

import (
	"bytes"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"
)

// Responses in Kubernetes protobuf. Typed clients (client-go's clientsets,
// kubectl's generators) ask for protobuf first and JSON second; upstream
// answers protobuf for every typed object, Status errors and a custom
// resource's Scale included, which is also what those clients decode
// fastest. Custom resource objects have no protobuf form (upstream answers
// 406 there). Lists and watch events of whole objects stay JSON to a
// client that takes JSON too (collectionMedia).

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
