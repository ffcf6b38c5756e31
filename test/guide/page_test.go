package guide

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// A page is one Markdown file's sessions: its ```console blocks in order.
type page struct {
	path   string
	slow   bool     // marked with slowMark: skipped with -short
	lines  []string // the file, line by line (for -update)
	blocks []block
}

// A block is one ```console block.
type block struct {
	startLine int // line of the opening fence, 1-based
	server    bool
	commands  []command
}

// A command is one `$ ` command of a session (with its continuation lines
// and here-document) and the output the page shows after it.
type command struct {
	line int    // line of its `$ `, 1-based
	text string // the command as the shell gets it, without `$ `
	// want is the output shown, up to the next command or the end of the
	// block; wantFrom and wantTo are its line range in page.lines (0-based,
	// half open).
	want             string
	wantFrom, wantTo int
}

// slowMark on a line of its own marks a page whose session takes more than
// a few seconds (one that links a Go test binary, say).
const slowMark = "<!-- guide: slow -->"

var (
	fence      = regexp.MustCompile("^```+")
	hereDoc    = regexp.MustCompile(`<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?`)
	serveStart = regexp.MustCompile(`^(admitd|go run \./cmd/admitd) serve(\s|$)`)
)

// readPage reads the console blocks of a Markdown file.
func readPage(path string) (*page, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p := &page{path: path, lines: strings.Split(string(data), "\n")}
	for i := 0; i < len(p.lines); i++ {
		if strings.TrimSpace(p.lines[i]) == slowMark {
			p.slow = true
		}
		f := fence.FindString(p.lines[i])
		if f == "" {
			continue
		}
		info := strings.Fields(strings.TrimPrefix(p.lines[i], f))
		end := i + 1
		for end < len(p.lines) && strings.TrimSpace(p.lines[end]) != f {
			end++
		}
		if end == len(p.lines) {
			return nil, fmt.Errorf("%s:%d: code block never closed", path, i+1)
		}
		if len(info) > 0 && info[0] == "console" {
			b, err := readBlock(p.lines, i, end)
			if err != nil {
				return nil, fmt.Errorf("%s:%w", path, err)
			}
			p.blocks = append(p.blocks, b)
		}
		i = end
	}
	return p, nil
}

// readBlock reads the session between the fences at lines open and close
// (0-based). A command is a line starting with `$ `; a line ending in `\`
// continues it, and a here-document it opens runs to its delimiter line.
func readBlock(lines []string, open, close int) (block, error) {
	b := block{startLine: open + 1}
	i := open + 1
	for i < close && !strings.HasPrefix(lines[i], "$ ") {
		if strings.TrimSpace(lines[i]) != "" {
			return b, fmt.Errorf("%d: console block has output before its first `$ ` command", i+1)
		}
		i++
	}
	for i < close {
		c := command{line: i + 1}
		text := []string{strings.TrimPrefix(lines[i], "$ ")}
		i++
		for strings.HasSuffix(text[len(text)-1], `\`) && i < close {
			text = append(text, lines[i])
			i++
		}
		if m := hereDoc.FindStringSubmatch(strings.Join(text, "\n")); m != nil {
			for i < close && strings.TrimSpace(lines[i]) != m[1] {
				text = append(text, lines[i])
				i++
			}
			if i == close {
				return b, fmt.Errorf("%d: here-document %s never ends", c.line, m[1])
			}
			text = append(text, lines[i])
			i++
		}
		c.text = strings.Join(text, "\n")
		c.wantFrom = i
		for i < close && !strings.HasPrefix(lines[i], "$ ") {
			i++
		}
		c.wantTo = i
		c.want = strings.Join(lines[c.wantFrom:c.wantTo], "\n")
		b.commands = append(b.commands, c)
	}
	if len(b.commands) > 0 && serveStart.MatchString(b.commands[0].text) {
		b.server = true
		if len(b.commands) > 1 {
			return b, fmt.Errorf("%d: a server block holds its serve command alone", b.startLine)
		}
	}
	return b, nil
}

// hasServer reports whether the page has a server block.
func (p *page) hasServer() bool {
	for _, b := range p.blocks {
		if b.server {
			return true
		}
	}
	return false
}

// serveArgs are the arguments after `serve` of a server block's command.
func (b block) serveArgs() []string {
	text := serveStart.ReplaceAllString(b.commands[0].text, "")
	text = strings.ReplaceAll(text, "\\\n", " ")
	return strings.Fields(text)
}

// update replaces the output shown after each command with got[i], and
// returns the page's new text.
func (p *page) update(got map[int]string) string {
	var out []string
	next := 0
	for _, b := range p.blocks {
		for _, c := range b.commands {
			g, ok := got[c.line]
			if !ok {
				continue
			}
			out = append(out, p.lines[next:c.wantFrom]...)
			if g != "" {
				out = append(out, strings.Split(g, "\n")...)
			}
			next = c.wantTo
		}
	}
	out = append(out, p.lines[next:]...)
	return strings.Join(out, "\n")
}
