package apiserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
)

// listStreamPage is how many stored objects a streamed list reads at once.
const listStreamPage = 500

// listWriteChunk is how much of a streamed list is handed to the
// connection at once: over HTTP/2, a DATA frame (9-byte header) that fills
// one 16 KiB TLS record exactly. A larger chunk becomes 16 KiB frames, each
// a full record plus a 9-byte one: two records and two write calls per
// frame instead of one.
const listWriteChunk = 16<<10 - 9

// serveJSONList answers a list in JSON without ever holding its decoded
// objects together: each object is encoded as soon as it is read, and a
// list without a limit is written while storage is still being read, a
// page at a time (as upstream's streaming list encoding, KEP-5116). A
// list with a limit holds its encoded items until it knows its continue
// token, which comes first. The bytes are those of the whole list encoded
// at once.
func (s *Server) serveJSONList(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource, lq *listQuery) {
	head := func(metadata any) []byte {
		var b bytes.Buffer
		b.WriteString(`{"kind":`)
		writeJSONValue(&b, res.ListKind)
		b.WriteString(`,"apiVersion":`)
		writeJSONValue(&b, res.GroupVersion().String())
		b.WriteString(`,"metadata":`)
		writeJSONValue(&b, metadata)
		b.WriteString(`,"items":[`)
		return b.Bytes()
	}
	items := &listItemWriter{}
	if lq.limit > 0 {
		var body bytes.Buffer
		items.w = &body
		take, have, _ := s.cachedItemsTaker(r.Context(), res, layout.ListPrefix(res, rq.info.Namespace), lq, items.write)
		lm, err := s.scanPages(r.Context(), res, rq.info.Namespace, lq, 0, nil, have, take)
		if err != nil {
			writeError(w, r, err)
			return
		}
		startJSON(w, rq)
		_, _ = w.Write(head(listMetadata(res, lm)))
		_, _ = w.Write(body.Bytes())
		_, _ = w.Write([]byte("]}\n"))
		return
	}
	prefix := layout.ListPrefix(res, rq.info.Namespace)
	var capture *bodyCapture
	var gen int
	rv, begun, kept := "", false, false
	if wholeListQuery(res, lq) {
		if body := s.listBody(r.Context(), res, prefix); body != nil {
			writeListBody(w, rq, body)
			return
		}
		if capture, gen = s.items.startCapture(res, prefix); capture != nil {
			defer func() { s.items.endCapture(res, prefix, gen, capture, rv, kept) }()
		}
	}
	// The answer begins with its first item (or its end), once that item
	// was read without error: a failure to read the first page (a
	// conversion webhook down) is still an error Status.
	var dst io.Writer = w
	if capture != nil {
		dst = io.MultiWriter(w, capture)
	}
	out := bufio.NewWriterSize(dst, listWriteChunk)
	items.w = out
	begin := func() {
		if !begun {
			begun = true
			startJSON(w, rq)
			_, _ = out.Write(head(listMetadata(res, metav1.ListMeta{ResourceVersion: rv})))
		}
	}
	emit := func(item []byte) error {
		begin()
		return items.write(item)
	}
	take, have, finish := s.cachedItemsTaker(r.Context(), res, prefix, lq, emit)
	_, err := s.scanPages(r.Context(), res, rq.info.Namespace, lq, listStreamPage, func(v string) error {
		rv = v
		return nil
	}, have, take)
	switch {
	case err != nil && !begun:
		writeError(w, r, err)
	case err != nil:
		panic(http.ErrAbortHandler) // the answer has begun: end it broken
	default:
		finish()
		begin()
		_, _ = out.WriteString("]}\n")
		kept = out.Flush() == nil
	}
}

func startJSON(w http.ResponseWriter, rq *request) {
	setWarnings(w, rq)
	w.Header().Set("Content-Type", mediaJSON)
	w.WriteHeader(http.StatusOK)
}

// writeJSONValue writes v as encoding/json does inside a larger value.
func writeJSONValue(b *bytes.Buffer, v any) {
	data, _ := json.Marshal(v)
	b.Write(data)
}

// listItemWriter writes a list's items, comma separated.
type listItemWriter struct {
	w interface{ Write([]byte) (int, error) }
	n int
}

func (iw *listItemWriter) write(item []byte) error {
	if iw.n > 0 {
		if _, err := iw.w.Write([]byte{','}); err != nil {
			return err
		}
	}
	iw.n++
	_, err := iw.w.Write(item)
	return err
}

// listMetadata is a list's metadata as encoded: a custom resource's list
// (upstream's UnstructuredList, whose storage always sets a continue
// token) names its continue token even when it is empty.
func listMetadata(res *registry.Resource, lm metav1.ListMeta) any {
	if !res.Unstructured {
		return lm
	}
	m := map[string]any{"continue": lm.Continue, "resourceVersion": lm.ResourceVersion}
	if lm.RemainingItemCount != nil {
		m["remainingItemCount"] = *lm.RemainingItemCount
	}
	return m
}
