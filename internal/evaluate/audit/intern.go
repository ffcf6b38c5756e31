package audit

import (
	"encoding/json"
	"sort"
	"strings"
)

// interner shares equal messages, warning lists, audit annotations and
// patches between findings: a policy says the same about many objects,
// and a report of many objects would otherwise hold a copy per finding.
// It keeps at most maxInterned values; later ones are not shared.
type interner struct {
	values map[string]any
}

const maxInterned = 1 << 14

func (in *interner) share(key string, v any) any {
	if got, ok := in.values[key]; ok {
		return got
	}
	if in.values == nil {
		in.values = map[string]any{}
	}
	if len(in.values) < maxInterned {
		in.values[key] = v
	}
	return v
}

func (in *interner) str(s string) string {
	if s == "" {
		return s
	}
	return in.share("s\x00"+s, s).(string)
}

func (in *interner) strs(ss []string) []string {
	if len(ss) == 0 {
		return ss
	}
	return in.share("w\x00"+strings.Join(ss, "\x00"), ss).([]string)
}

func (in *interner) annotations(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("a")
	for _, k := range keys {
		b.WriteString("\x00" + k + "\x00" + m[k])
	}
	return in.share(b.String(), m).(map[string]string)
}

func (in *interner) patch(p json.RawMessage) json.RawMessage {
	if len(p) == 0 {
		return p
	}
	return in.share("p\x00"+string(p), p).(json.RawMessage)
}
