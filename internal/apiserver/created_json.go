package apiserver

import (
	"bytes"
	"strconv"

	"k8s.io/apimachinery/pkg/types"
)

// The response to a create is the stored object with its resourceVersion.
// When the stored bytes are the object's own JSON (no conversion to another
// storage version), the response is those bytes with the resourceVersion
// put in, instead of a second encoding of the whole object.

// createdResponse returns stored, the JSON of an object whose metadata
// has uid and no resourceVersion, as encoding/json's Encoder would write
// the object with resourceVersion rv. ok is false when it cannot tell where
// the field goes.
//
// encoding/json writes ObjectMeta's fields in declaration order, and
// resourceVersion comes right after uid. The first `"uid":"<uid>"` in the
// document is metadata's: metadata follows only apiVersion and kind, and
// precedes uid only with string fields; and the text cannot lie inside a
// string, where every quote is escaped.
func createdResponse(stored []byte, uid types.UID, rv int64) (out []byte, ok bool) {
	if !plainUID(string(uid)) {
		return nil, false
	}
	needle := make([]byte, 0, len(uid)+9)
	needle = append(append(append(needle, `"uid":"`...), uid...), '"')
	at := bytes.Index(stored, needle)
	if at < 0 || bytes.Contains(stored, []byte(`"resourceVersion":`)) {
		return nil, false
	}
	at += len(needle)
	out = make([]byte, 0, len(stored)+40)
	out = append(out, stored[:at]...)
	out = append(out, `,"resourceVersion":"`...)
	out = strconv.AppendInt(out, rv, 10)
	out = append(out, '"')
	out = append(out, stored[at:]...)
	return append(out, '\n'), true
}

// plainUID: the uid needs no JSON escaping (the server's own uids are UUIDs).
func plainUID(uid string) bool {
	if uid == "" {
		return false
	}
	for i := 0; i < len(uid); i++ {
		c := uid[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-') {
			return false
		}
	}
	return true
}
