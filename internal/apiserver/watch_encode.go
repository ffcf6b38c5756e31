package apiserver

import (
	"bytes"
	"encoding/binary"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
)

// negotiateWatch negotiates a watch's output: as for a list, and then the
// chosen media type must have a streaming form (YAML has none), else
// upstream's 406 naming the streaming media types.
func negotiateWatch(r *http.Request, res *registry.Resource) (negotiated, error) {
	n, err := negotiateOutput(r, res)
	if err != nil {
		return n, err
	}
	if n.media == mediaYAML {
		return n, errNotAcceptable("only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch")
	}
	return n, nil
}

// streamContentType is the Content-Type of a watch stream negotiated as n
// (and collectionMedia).
func (n negotiated) streamContentType() string {
	if n.protobufEvents() {
		return mediaProtobuf + ";stream=watch"
	}
	return mediaJSON
}

// protobufEvents says whether the events of a watch negotiated as n are
// protobuf frames.
func (n negotiated) protobufEvents() bool {
	return n.media == mediaProtobuf
}

// eventSize is the size of the event a frame of this stream holds: the
// frame, but the length before a protobuf event.
func (ws *watchStream) eventSize(frame []byte) int {
	if ws.out.protobufEvents() {
		return len(frame) - protobufFrameHeader
	}
	return len(frame)
}

// protobufFrameHeader is the size of the length before each protobuf event.
const protobufFrameHeader = 4

// protobufEventFrame is one protobuf watch frame: the length of the event,
// then the event, whose object is in Kubernetes protobuf.
func protobufEventFrame(typ string, obj any) ([]byte, error) {
	var embedded bytes.Buffer
	if err := protobufSerializer().Encode(obj.(runtime.Object), &embedded); err != nil {
		return nil, err
	}
	ev := metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: embedded.Bytes()}}
	data, err := ev.Marshal()
	if err != nil {
		return nil, err
	}
	frame := binary.BigEndian.AppendUint32(make([]byte, 0, protobufFrameHeader+len(data)), uint32(len(data)))
	return append(frame, data...), nil
}
