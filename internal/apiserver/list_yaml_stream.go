package apiserver

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/internal/registry"
)

// A list in YAML is its JSON turned into YAML, whose mapping keys are
// sorted: apiVersion, items, kind, metadata. serveYAMLList writes it an
// item at a time as storage is read, never holding the list (turned into
// YAML whole, a list costs several times its size in maps and strings):
// each item is the YAML of a one-item "items" sequence, so that it is
// indented and wrapped as in the whole list, and the metadata, known last,
// comes last.

// yamlItems is a one-item list body, whose YAML is "items:\n- ...".
type yamlItems struct {
	Items []runtime.Object `json:"items"`
}

const yamlItemsKey = "items:\n"

// serveYAMLList answers a list in YAML; see above.
func (s *Server) serveYAMLList(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource, lq *listQuery) {
	out := bufio.NewWriterSize(w, listWriteChunk)
	begun := false
	each := func(obj runtime.Object) error {
		if !res.Unstructured {
			obj.GetObjectKind().SetGroupVersionKind(emptyGVK)
		}
		item, err := yaml.Marshal(yamlItems{Items: []runtime.Object{obj}})
		if err != nil {
			return err
		}
		if !begun {
			head, _, err := yamlListEnds(res, metav1.ListMeta{})
			if err != nil {
				return err
			}
			begun = true
			startYAML(w, rq)
			_, _ = out.Write(head)
			_, _ = out.WriteString(yamlItemsKey)
		}
		_, err = out.Write(bytes.TrimPrefix(item, []byte(yamlItemsKey)))
		return err
	}
	lm, err := s.scanList(r.Context(), res, rq.info.Namespace, lq, listStreamPage, nil, each)
	if err == nil && !begun {
		writeNegotiated(w, r, http.StatusOK, negotiated{media: mediaYAML}, emptyListResponse(res, lm))
		return
	}
	var tail []byte
	if err == nil {
		_, tail, err = yamlListEnds(res, lm)
	}
	if err != nil {
		failStream(w, r, err, begun)
		return
	}
	endStream(out, tail)
}

func emptyListResponse(res *registry.Resource, lm metav1.ListMeta) *listResponse {
	return &listResponse{Kind: res.ListKind, APIVersion: res.GroupVersion().String(), Metadata: listMetadata(res, lm), Items: []runtime.Object{}}
}

// yamlListEnds is the YAML of res's list before its items and after them.
func yamlListEnds(res *registry.Resource, lm metav1.ListMeta) (head, tail []byte, err error) {
	empty, err := yaml.Marshal(emptyListResponse(res, lm))
	if err != nil {
		return nil, nil, err
	}
	head, tail, ok := bytes.Cut(empty, []byte("items: []\n"))
	if !ok {
		return nil, nil, fmt.Errorf("a list's YAML without its items: %q", empty)
	}
	return head, tail, nil
}

func startYAML(w http.ResponseWriter, rq *request) {
	setWarnings(w, rq)
	w.Header().Set("Content-Type", mediaYAML)
	w.WriteHeader(http.StatusOK)
}
