package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// benchList is a ConfigMapList of about 1 MB, as a list answer is written:
// compact, ending in a newline.
func benchList() []byte {
	var b bytes.Buffer
	b.WriteString(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"4242"},"items":[`)
	for i := 0; b.Len() < 1<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"metadata":{"name":"config-%d","namespace":"default","uid":"5f0c7c1e-1d2b-4c3a-9e8f-%012d","resourceVersion":"%d",`+
			`"creationTimestamp":"2026-12-03T13:34:20Z","labels":{"app":"web","tier":"frontend"},"annotations":{},`+
			`"managedFields":[{"manager":"kubectl","operation":"Update","apiVersion":"v1","time":"2026-12-03T13:34:20Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:config.yaml":{}}}}]},`+
			`"data":{"config.yaml":"server:\n  port: %d\n  name: \"web\"\n","empty":""}}`, i, i, 1000+i, 8000+i%100)
	}
	b.WriteString("]}\n")
	return b.Bytes()
}

// discardResponse is a ResponseWriter that keeps nothing.
type discardResponse struct{ h http.Header }

func (d *discardResponse) Header() http.Header         { return d.h }
func (d *discardResponse) WriteHeader(int)             {}
func (d *discardResponse) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkPrettyIndent: a 1 MB list indented as prettyWriter did before
// (held whole, then json.Indent into a second buffer) and as it does now
// (streamed), both fed as a streamed list is written.
func BenchmarkPrettyIndent(b *testing.B) {
	list := benchList()
	feed := func(w io.Writer) {
		for from := 0; from < len(list); from += listWriteChunk {
			_, _ = w.Write(list[from:min(from+listWriteChunk, len(list))])
		}
	}
	b.Run("whole", func(b *testing.B) {
		b.SetBytes(int64(len(list)))
		b.ReportAllocs()
		for b.Loop() {
			var body, out bytes.Buffer
			feed(&body)
			if err := json.Indent(&out, bytes.TrimRight(body.Bytes(), "\n"), "", "  "); err != nil {
				b.Fatal(err)
			}
			_, _ = io.Discard.Write(out.Bytes())
		}
	})
	b.Run("stream", func(b *testing.B) {
		b.SetBytes(int64(len(list)))
		b.ReportAllocs()
		w := &discardResponse{h: http.Header{"Content-Type": {mediaJSON}}}
		for b.Loop() {
			pw := &prettyWriter{w: w, api: true}
			feed(pw)
			pw.finish()
		}
	})
}
