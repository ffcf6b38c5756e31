package audit

import (
	"bytes"
	"encoding/json"
)

// bodyForLog returns a request or response body as it goes into an event:
// nil if it is not valid JSON (so one bad body cannot lose the whole event),
// and without managed fields if asked. Key order is kept.
func bodyForLog(raw json.RawMessage, omitManagedFields bool) json.RawMessage {
	if len(raw) == 0 || !json.Valid(raw) {
		return nil
	}
	if !omitManagedFields {
		return raw
	}
	return withoutManagedFields(raw)
}

// withoutManagedFields drops metadata.managedFields from an object, from
// each item of a list and from each row object of a Table, as upstream's
// copyWithoutManagedFields does.
func withoutManagedFields(raw json.RawMessage) json.RawMessage {
	ms, ok := objectMembers(raw)
	if !ok {
		return raw
	}
	isTable := false
	for _, m := range ms {
		if m.key == "kind" {
			isTable = bytes.Equal(bytes.TrimSpace(m.val), []byte(`"Table"`))
		}
	}
	for i, m := range ms {
		switch {
		case m.key == "metadata":
			ms[i].val = dropMember(m.val, "managedFields")
		case m.key == "items":
			ms[i].val = mapElems(m.val, dropObjectManagedFields)
		case m.key == "rows" && isTable:
			ms[i].val = mapElems(m.val, func(row json.RawMessage) json.RawMessage {
				return mapMember(row, "object", dropObjectManagedFields)
			})
		}
	}
	return encodeMembers(ms)
}

func dropObjectManagedFields(obj json.RawMessage) json.RawMessage {
	return mapMember(obj, "metadata", func(md json.RawMessage) json.RawMessage { return dropMember(md, "managedFields") })
}

type member struct {
	key string
	val json.RawMessage
}

// objectMembers splits a JSON object into its members, in order.
func objectMembers(raw []byte) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var ms []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		ms = append(ms, member{key, v})
	}
	return ms, true
}

func encodeMembers(ms []member) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// mapMember replaces the value of key in a JSON object with f(value).
func mapMember(raw json.RawMessage, key string, f func(json.RawMessage) json.RawMessage) json.RawMessage {
	ms, ok := objectMembers(raw)
	if !ok {
		return raw
	}
	for i := range ms {
		if ms[i].key == key {
			ms[i].val = f(ms[i].val)
		}
	}
	return encodeMembers(ms)
}

// dropMember removes key from a JSON object.
func dropMember(raw json.RawMessage, key string) json.RawMessage {
	ms, ok := objectMembers(raw)
	if !ok {
		return raw
	}
	out := ms[:0]
	for _, m := range ms {
		if m.key != key {
			out = append(out, m)
		}
	}
	return encodeMembers(out)
}

// mapElems replaces each element of a JSON array with f(element).
func mapElems(raw json.RawMessage, f func(json.RawMessage) json.RawMessage) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return raw
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i := 0; dec.More(); i++ {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return raw
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(f(v))
	}
	b.WriteByte(']')
	return b.Bytes()
}
