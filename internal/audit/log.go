package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// Sink receives finished events.
type Sink interface {
	WriteEvent(ev *Event) error
}

// LogWriter appends events to a file, one JSON object per line. Each event
// is written with a single write call before WriteEvent returns, so a reader
// of the file sees it at once (upstream's log backend in its default
// blocking mode). It is safe for concurrent use.
type LogWriter struct {
	mu     sync.Mutex
	w      io.Writer
	closer io.Closer
}

var _ Sink = (*LogWriter)(nil)

// NewLogWriter opens path for appending, creating it with mode 0600 and its
// directory with 0700 if needed. The path "-" means standard output.
// Rotation (--audit-log-maxsize and friends) is not supported.
func NewLogWriter(path string) (*LogWriter, error) {
	if path == "-" {
		return &LogWriter{w: os.Stdout}, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return &LogWriter{w: f, closer: f}, nil
}

// NewStreamWriter writes events to w (for tests and standard output).
func NewStreamWriter(w io.Writer) *LogWriter { return &LogWriter{w: w} }

// WriteEvent writes ev as one line.
func (l *LogWriter) WriteEvent(ev *Event) error {
	line, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("audit log: encoding event %s: %w", ev.AuditID, err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(line); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	return nil
}

// Close closes the file; later writes fail.
func (l *LogWriter) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closer == nil {
		return nil
	}
	err := l.closer.Close()
	l.closer = nil
	return err
}
