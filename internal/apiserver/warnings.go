package apiserver

import (
	"net/http"
	"unicode/utf8"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// Limits of the Warning headers of one response, as upstream: once the
// texts exceed warningTotalRunes in all, every text is cut to
// warningItemRunes and no more texts are added past the total.
const (
	warningTotalRunes = 4 * 1024
	warningItemRunes  = 256
)

// warningHeaders returns the Warning header values for texts: deduplicated,
// in order, truncated as upstream's warning recorder does.
func warningHeaders(texts []string) []string {
	seen := map[string]bool{}
	var unique []string
	for _, t := range texts {
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		unique = append(unique, t)
	}
	total := 0
	for _, t := range unique {
		total += utf8.RuneCountInString(t)
	}
	truncate := total > warningTotalRunes
	var out []string
	written := 0
	for _, t := range unique {
		if truncate {
			if written >= warningTotalRunes {
				break
			}
			if utf8.RuneCountInString(t) > warningItemRunes {
				t = string([]rune(t)[:warningItemRunes])
			}
		}
		h, err := utilnet.NewWarningHeader(299, "-", t)
		if err != nil {
			continue
		}
		written += utf8.RuneCountInString(t)
		out = append(out, h)
	}
	return out
}

// setWarnings writes the request's warnings as headers; it must run before
// the status code is written.
func setWarnings(w http.ResponseWriter, rq *request) {
	if rq == nil {
		return
	}
	for _, h := range warningHeaders(rq.record.Warnings()) {
		w.Header().Add("Warning", h)
	}
}

// addWarnings records the warnings of the kind's strategy for the request.
func addWarnings(rq *request, texts []string) {
	for _, t := range texts {
		if rq != nil {
			rq.record.AddWarning(t)
		}
	}
}
