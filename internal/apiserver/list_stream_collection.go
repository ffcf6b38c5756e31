package apiserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
)

// jsonCollection is a list-like answer other than the list itself (a
// Table, a PartialObjectMetadataList) that serveJSONCollection writes in
// JSON an item at a time, as serveJSONList writes lists: its metadata
// comes before its items, so an unlimited answer begins with its first
// item and a limited one holds its encoded items until its continue
// token is known.
type jsonCollection struct {
	// empty is the answer with no items and the metadata lm; its items
	// (field) encode as [].
	empty func(lm metav1.ListMeta) any
	field string
	// item is what an object becomes among the items.
	item func(obj runtime.Object) any
}

// ends is the JSON of c's answer before its items and after them.
func (c jsonCollection) ends(lm metav1.ListMeta) (head, tail []byte, err error) {
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(c.empty(lm)); err != nil {
		return nil, nil, err
	}
	before, after, ok := bytes.Cut(b.Bytes(), []byte(`"`+c.field+`":[]`))
	if !ok {
		return nil, nil, fmt.Errorf("no %s in %s", c.field, b.Bytes())
	}
	head = append(append(before, '"'), c.field+`":[`...)
	return head, append([]byte{']'}, after...), nil
}

func (s *Server) serveJSONCollection(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource, lq *listQuery, c jsonCollection) {
	items := &listItemWriter{}
	var body bytes.Buffer
	out := bufio.NewWriterSize(w, listWriteChunk)
	rv, begun := "", false
	if lq.limit > 0 {
		items.w = &body
	} else {
		items.w = out
	}
	each := func(obj runtime.Object) error {
		data, err := json.Marshal(c.item(obj))
		if err != nil {
			return err
		}
		if !begun && lq.limit <= 0 {
			head, _, err := c.ends(metav1.ListMeta{ResourceVersion: rv})
			if err != nil {
				return err
			}
			begun = true
			startJSON(w, rq)
			_, _ = out.Write(head)
		}
		return items.write(data)
	}
	lm, err := s.scanList(r.Context(), res, rq.info.Namespace, lq, listStreamPage, func(v string) error {
		rv = v
		return nil
	}, each)
	var head, tail []byte
	if err == nil {
		head, tail, err = c.ends(lm)
	}
	if err != nil {
		failStream(w, r, err, begun)
		return
	}
	if !begun {
		startJSON(w, rq)
		_, _ = out.Write(head)
		_, _ = out.Write(body.Bytes())
	}
	endStream(out, tail)
}

// failStream answers a streamed answer's error: a Status while none of
// the answer was written, else the answer ended broken.
func failStream(w http.ResponseWriter, r *http.Request, err error, begun bool) {
	if begun {
		panic(http.ErrAbortHandler)
	}
	writeError(w, r, err)
}

// endStream writes a streamed answer's last bytes, ending it broken when
// they cannot be sent.
func endStream(out *bufio.Writer, tail []byte) {
	_, _ = out.Write(tail)
	if out.Flush() != nil {
		panic(http.ErrAbortHandler)
	}
}
