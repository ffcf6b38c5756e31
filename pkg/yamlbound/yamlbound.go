// Package yamlbound bounds what a YAML document may expand to before it is
// converted to JSON. sigs.k8s.io/yaml (as upstream's decoders) writes out
// every alias in full, and go-yaml's guard against alias bombs counts
// nodes, not bytes: aliases of one long scalar pass it, so a 300 KB body
// becomes 100 MB of JSON and a 3 MiB one hundreds of gigabytes. It is not
// a YAML decoder: callers convert the document as before once it passes.
package yamlbound

import (
	"bytes"
	"fmt"

	yaml "go.yaml.in/yaml/v2"
)

// MinLimit is the least Check allows a document to expand to: 3 MiB of
// JSON, what the API server accepts as a JSON body.
const MinLimit = 3 << 20

// Check returns an error if the JSON form of the first YAML document in
// data would be larger than MinLimit or four times data, whichever is
// larger. A document without aliases passes without being parsed, and one
// that does not parse is left for the converter to report.
func Check(data []byte) error {
	if bytes.IndexByte(data, '*') < 0 {
		return nil
	}
	var v any
	if yaml.Unmarshal(data, &v) != nil {
		return nil
	}
	limit := max(MinLimit, 4*len(data))
	if n := size(v, limit); n > limit {
		return fmt.Errorf("the YAML document's aliases expand it to more than %d bytes", limit)
	}
	return nil
}

// size approximates the length of v's JSON, stopping once it passes limit.
// Walking v reads each alias once per use, as go-yaml decoded it.
func size(v any, limit int) int {
	n := 2
	switch v := v.(type) {
	case string:
		return len(v) + 2
	case []any:
		for _, e := range v {
			if n += size(e, limit-n) + 1; n > limit {
				break
			}
		}
	case map[any]any:
		for k, e := range v {
			if n += size(k, limit-n) + size(e, limit-n) + 2; n > limit {
				break
			}
		}
	default:
		n = len(fmt.Sprint(v))
	}
	return n
}
