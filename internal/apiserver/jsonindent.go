package apiserver

import (
	"bufio"
	"io"
	"strings"
)

// jsonIndenter lays out JSON as it is written to it, byte for byte as
// json.Indent(dst, src, "", "  ") lays out the whole of src, but for the
// newlines that end the input, which it drops. It holds no more than a
// few flags and the nesting depth, so an indented answer costs no more
// memory than a compact one however long it is.
//
// It is not a validator: it writes what it is given, laid out as far as
// it is JSON. Every byte of the input but whitespace outside strings is
// written as it came, in order; only the whitespace between tokens is
// dropped and laid out again. Invalid JSON comes out garbled rather than
// as it came (json.Indent would fail on it), but never stops, loops or
// panics the indenter. Our own answers are always valid JSON.
//
// As json.Indent's, the output grows with the length times the depth of
// the input: each line begins with two spaces a level.
type jsonIndenter struct {
	out *bufio.Writer
	// depth is how many objects and arrays are open.
	depth int
	// inString: the last quote written opened a string; escaped: the
	// byte before was a backslash in it, so a quote does not close it.
	inString, escaped bool
	// openPending: a '{' or '[' was the last token; the newline after
	// it waits for the next one, as there is none in "{}" and "[]".
	openPending bool
	// begun: the input's first token was seen. Whitespace before it is
	// dropped, and whitespace after the top-level value (depth 0 again)
	// is kept, as json.Indent keeps it.
	begun bool
	// trailingNewlines is how many newlines came last after the
	// top-level value: written only if more whitespace follows, so that
	// the input's final newline is dropped.
	trailingNewlines int
}

// jsonIndentBuffer is how much indented output is held before it is
// written on: the chunk of a streamed list (see listWriteChunk).
const jsonIndentBuffer = listWriteChunk

func newJSONIndenter(w io.Writer) *jsonIndenter {
	return &jsonIndenter{out: bufio.NewWriterSize(w, jsonIndentBuffer)}
}

// Write lays out p: all of it, or it returns the error of the writer
// below. Runs of bytes that are neither whitespace nor punctuation
// (strings, numbers, literals) are copied in one piece.
func (ind *jsonIndenter) Write(p []byte) (int, error) {
	run := 0 // p[run:i] is still to be copied as it came
	for i := 0; i < len(p); i++ {
		if ind.inString {
			i = ind.skipString(p, i)
			continue
		}
		c := p[i]
		switch c {
		case ' ', '\t', '\r', '\n':
			_, _ = ind.out.Write(p[run:i])
			run = i + 1
			ind.whitespace(c)
		case '{', '[', '}', ']', ',', ':':
			_, _ = ind.out.Write(p[run:i])
			run = i + 1
			ind.punctuation(c)
		default: // a string, number or literal begins or goes on
			if ind.openPending || ind.trailingNewlines > 0 {
				_, _ = ind.out.Write(p[run:i])
				run = i
				ind.beforeToken(false)
			}
			ind.begun = true
			ind.inString = c == '"'
		}
	}
	// bufio.Writer keeps its first error and returns it from every Write
	if _, err := ind.out.Write(p[run:]); err != nil {
		return len(p), err
	}
	return len(p), nil
}

// Flush writes on all that was laid out so far. The state stays: more
// may be written after it.
func (ind *jsonIndenter) Flush() error { return ind.out.Flush() }

// skipString goes through a string from p[i] to its closing quote, and
// returns the index of that quote, or len(p) when the string goes on.
func (ind *jsonIndenter) skipString(p []byte, i int) int {
	for ; i < len(p); i++ {
		switch c := p[i]; {
		case ind.escaped:
			ind.escaped = false
		case c == '\\':
			ind.escaped = true
		case c == '"':
			ind.inString = false
			return i
		}
	}
	return i
}

// whitespace outside a string: dropped, but after the top-level value.
func (ind *jsonIndenter) whitespace(c byte) {
	if !ind.begun || ind.depth > 0 {
		return
	}
	if c == '\n' {
		ind.trailingNewlines++
		return
	}
	ind.writeTrailingNewlines()
	_ = ind.out.WriteByte(c)
}

func (ind *jsonIndenter) punctuation(c byte) {
	closing := c == '}' || c == ']'
	ind.beforeToken(closing)
	switch c {
	case '{', '[':
		ind.begun = true
		ind.depth++
		ind.openPending = true
		_ = ind.out.WriteByte(c)
	case '}', ']':
		if ind.depth > 0 { // else the input is not JSON
			ind.depth--
		}
		if ind.openPending {
			ind.openPending = false // "{}" or "[]"
		} else {
			ind.newline()
		}
		_ = ind.out.WriteByte(c)
	case ',':
		_ = ind.out.WriteByte(c)
		ind.newline()
	case ':':
		_, _ = ind.out.WriteString(": ")
	}
}

// beforeToken writes what waited for the next token: newlines after the
// top-level value (only when the input is not JSON) and the newline
// after an opening bracket, unless the token closes it.
func (ind *jsonIndenter) beforeToken(closing bool) {
	ind.writeTrailingNewlines()
	if ind.openPending && !closing {
		ind.openPending = false
		ind.newline()
	}
}

func (ind *jsonIndenter) writeTrailingNewlines() {
	for ; ind.trailingNewlines > 0; ind.trailingNewlines-- {
		_ = ind.out.WriteByte('\n')
	}
}

// indentSpaces is written a slice at a time: two spaces a level.
var indentSpaces = strings.Repeat(" ", 128)

// newline begins a line at the current depth.
func (ind *jsonIndenter) newline() {
	_ = ind.out.WriteByte('\n')
	for n := 2 * ind.depth; n > 0; {
		k := min(n, len(indentSpaces))
		_, _ = ind.out.WriteString(indentSpaces[:k])
		n -= k
	}
}
