package apiserver

import (
	"bufio"
	"encoding/binary"
	"io"
	"math/bits"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
)

// A built-in list in Kubernetes protobuf is the "k8s\x00" prefix and a
// runtime.Unknown whose raw bytes are the list message: its ListMeta as
// field 1 and each item as field 2, every one preceded by its length. The
// lengths come first, so the list's size must be known before its first
// byte is written. serveProtobufList learns it without holding the
// decoded objects: it encodes each item as storage is read and keeps the
// encoded bytes while they stay under protobufListKeepBytes; a larger
// list keeps only its size and is read a second time, at the same
// revision, to be written an item at a time (as upstream's streaming
// collection encoding, which holds the items in its watch cache instead).

// protobufListKeepBytes bounds the encoded items a protobuf list holds.
const protobufListKeepBytes = 1 << 20

const (
	protobufListMetaTag = 1<<3 | 2 // field 1, length-delimited
	protobufListItemTag = 2<<3 | 2 // field 2, length-delimited
)

// protobufItem is what the generated code of every built-in type has.
type protobufItem interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// canStreamProtobuf reports whether res's objects encode as protobuf items.
func canStreamProtobuf(res *registry.Resource) bool {
	if res.Unstructured {
		return false
	}
	obj, err := registry.Scheme().New(res.GroupVersion().WithKind(res.Kind))
	if err != nil {
		return false
	}
	_, ok := obj.(protobufItem)
	return ok
}

// protobufCollection is a list-like answer serveProtobufList writes: a
// built-in list, or a meta.k8s.io/v1 PartialObjectMetadataList (whose
// fields are numbered as a list's; v1beta1's are not).
type protobufCollection struct {
	typeMeta runtime.TypeMeta
	// item is what an object becomes among the items.
	item func(obj runtime.Object) protobufItem
}

// protobufList is res's list as a protobufCollection.
func protobufList(res *registry.Resource) protobufCollection {
	return protobufCollection{
		typeMeta: runtime.TypeMeta{APIVersion: res.GroupVersion().String(), Kind: res.ListKind},
		item: func(obj runtime.Object) protobufItem {
			obj.GetObjectKind().SetGroupVersionKind(emptyGVK)
			return obj.(protobufItem)
		},
	}
}

// protobufPartialList is the PartialObjectMetadataList of v1 as a
// protobufCollection.
var protobufPartialList = protobufCollection{
	typeMeta: runtime.TypeMeta{APIVersion: metav1.SchemeGroupVersion.String(), Kind: asPartialList},
	item:     func(obj runtime.Object) protobufItem { return partialOf(obj, "v1") },
}

// protobufListPass is one read of a protobuf list: the size of its items
// with their headers and, while they fit, the items encoded.
type protobufListPass struct {
	item      func(obj runtime.Object) protobufItem
	itemsSize int
	kept      [][]byte
}

// dropped reports whether the items went over protobufListKeepBytes, so
// that none are kept.
func (p *protobufListPass) dropped() bool { return p.itemsSize > protobufListKeepBytes }

func (p *protobufListPass) add(obj runtime.Object) error {
	item := p.item(obj)
	n := item.Size()
	if p.itemsSize += protobufFieldSize(n); p.dropped() {
		p.kept = nil
		return nil
	}
	b := make([]byte, n)
	if _, err := item.MarshalToSizedBuffer(b); err != nil {
		return err
	}
	p.kept = append(p.kept, b)
	return nil
}

// serveProtobufList answers a built-in list to a client that takes only
// protobuf; see above.
func (s *Server) serveProtobufList(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource, lq *listQuery, c protobufCollection) {
	pass := protobufListPass{item: c.item}
	unpin := func() {}
	defer func() { unpin() }()
	lm, err := s.scanList(r.Context(), res, rq.info.Namespace, lq, listStreamPage, func(rv string) error {
		rev, err := parseResourceVersion(rv)
		if err == nil {
			unpin = s.readPins.pin(rev)
		}
		return err
	}, pass.add)
	if err != nil {
		writeError(w, r, err)
		return
	}
	setWarnings(w, rq)
	w.Header().Set("Content-Type", mediaProtobuf)
	w.WriteHeader(http.StatusOK)
	out := bufio.NewWriterSize(w, listWriteChunk)
	unknown := runtime.Unknown{TypeMeta: c.typeMeta}
	listMeta, err := lm.Marshal()
	if err == nil {
		_, _ = out.Write([]byte("k8s\x00"))
		size := protobufFieldSize(len(listMeta)) + pass.itemsSize
		_, err = unknown.MarshalToWriter(out, size, func(out io.Writer) (int, error) {
			n, err := writeProtobufField(out, protobufListMetaTag, listMeta)
			if err != nil {
				return n, err
			}
			written, err := s.writeProtobufItems(r, rq, res, lq, lm, &pass, out)
			if err == nil && written != pass.itemsSize {
				err = io.ErrShortWrite // the second read found other items
			}
			return n + written, err
		})
	}
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		panic(http.ErrAbortHandler) // the answer has begun: end it broken
	}
}

// writeProtobufItems writes the items pass kept or, when it kept too
// many, reads them again at the list's revision and writes them one by
// one.
func (s *Server) writeProtobufItems(r *http.Request, rq *request, res *registry.Resource, lq *listQuery, lm metav1.ListMeta,
	pass *protobufListPass, out io.Writer) (int, error) {
	written := 0
	if !pass.dropped() {
		for _, item := range pass.kept {
			n, err := writeProtobufField(out, protobufListItemTag, item)
			if written += n; err != nil {
				return written, err
			}
		}
		return written, nil
	}
	again := *lq
	if again.continueToken == "" {
		again.resourceVersion, again.rvMatch = lm.ResourceVersion, string(metav1.ResourceVersionMatchExact)
	}
	var buf []byte
	_, err := s.scanList(r.Context(), res, rq.info.Namespace, &again, listStreamPage, nil, func(obj runtime.Object) error {
		item := pass.item(obj)
		size := item.Size()
		if cap(buf) < size {
			buf = make([]byte, size)
		}
		if _, err := item.MarshalToSizedBuffer(buf[:size]); err != nil {
			return err
		}
		n, err := writeProtobufField(out, protobufListItemTag, buf[:size])
		written += n
		return err
	})
	return written, err
}

// protobufFieldSize is the encoded size of a length-delimited field of n
// bytes: its tag, its length and the bytes.
func protobufFieldSize(n int) int {
	return 1 + (bits.Len64(uint64(n)|1)+6)/7 + n
}

func writeProtobufField(out io.Writer, tag byte, data []byte) (int, error) {
	var head [1 + binary.MaxVarintLen64]byte
	head[0] = tag
	h := 1 + binary.PutUvarint(head[1:], uint64(len(data)))
	n, err := out.Write(head[:h])
	if err != nil {
		return n, err
	}
	m, err := out.Write(data)
	return n + m, err
}
