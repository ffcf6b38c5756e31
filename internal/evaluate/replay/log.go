package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/admitd/admitd/internal/audit"
)

// Event is one request of the audit log: its ResponseComplete event, with
// the line it was read from.
type Event struct {
	audit.Event
	// Line is the event's line in its file (1-based).
	Line int
	// File is the file it was read from.
	File string
}

// mutatingVerbs are the verbs replayed.
var mutatingVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true}

// maxLine is the longest line read: an event with a request and a
// response object of the largest objects etcd takes (1.5 MiB each) fits
// many times.
const maxLine = 64 << 20

// Log is audit log files: audit.k8s.io/v1 Events, JSON lines, as
// kube-apiserver's and admitd serve's --audit-log-path write them. It is
// read as a stream, twice: ScanLog once, to check it and learn what the
// replay must seed, and Run once more to replay; neither holds more than
// one event, so what a replay holds is bounded by the largest event, not
// by the log.
type Log struct {
	files []logFile
	// Requests is how many create, update, patch and delete requests on
	// resources the log has.
	Requests int
	// Incomplete are the last lines of files that were being written
	// ("file:line"): without a newline and not yet JSON. They are left
	// out; a line that is not an Event anywhere else is an error.
	Incomplete []string
	// uncreated are the namespaces the log's requests are in before any
	// request of the log creates them, in the order of their first use.
	uncreated []string
	// createdLater are those of uncreated that a later event of the log
	// creates, as that create stored them: the log's events are in the
	// order requests completed, so a controller's request in a new
	// namespace (kube-root-ca.crt) can precede the namespace's create.
	createdLater map[string]*unstructured.Unstructured
}

// logFile is a file of the log and how much of it the scan read: the
// replay reads no further (a log being written has grown since).
type logFile struct {
	path string
	size int64
}

// ScanLog reads the files, in order, and returns their Log; a line that
// is not an Event is an error naming its file and line, except a file's
// incomplete last line.
func ScanLog(paths ...string) (*Log, error) {
	l := &Log{createdLater: map[string]*unstructured.Unstructured{}}
	created, used := map[string]bool{}, map[string]bool{}
	for _, p := range paths {
		size, incomplete, err := readFile(p, -1, func(ev *Event) error {
			l.Requests++
			if ev.createsNamespace() {
				name := recordedName(ev) // a generateName's: the name the cluster gave
				if used[name] && !created[name] {
					l.createdLater[name] = createdNamespace(ev, name)
				}
				created[name] = true
			}
			if ns := ev.namespace(); ns != "" && !used[ns] {
				used[ns] = true
				if !created[ns] {
					l.uncreated = append(l.uncreated, ns)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		l.files = append(l.files, logFile{path: p, size: size})
		if incomplete > 0 {
			l.Incomplete = append(l.Incomplete, fmt.Sprintf("%s:%d", p, incomplete))
		}
	}
	return l, nil
}

// createsNamespace reports whether ev is a Namespace's successful create.
func (e *Event) createsNamespace() bool {
	ref := e.ObjectRef
	return ref.APIGroup == "" && ref.Resource == "namespaces" && e.Verb == "create" && e.succeeded() && !e.dryRun()
}

// createdNamespace is the namespace ev created, as the log recorded it
// (its responseObject, else its requestObject, else only its name), with
// only its name, labels and annotations: what admission reads of it.
func createdNamespace(ev *Event, name string) *unstructured.Unstructured {
	ns := namespace(name).Unstructured
	recorded := decode(ev.ResponseObject)
	if recorded == nil {
		recorded = decode(ev.RequestObject)
	}
	if recorded != nil {
		ns.SetLabels(recorded.GetLabels())
		ns.SetAnnotations(recorded.GetAnnotations())
	}
	return ns
}

// each calls fn with the ResponseComplete event of each create, update,
// patch and delete request on a resource, in the order of the files and
// lines, as far as the scan read; other events (reads, other stages) are
// left out.
func (l *Log) each(fn func(*Event) error) error {
	for _, f := range l.files {
		if _, _, err := readFile(f.path, f.size, fn); err != nil {
			return err
		}
	}
	return nil
}

// readFile calls fn with the events of a file's first limit bytes (all
// when limit < 0) that each passes on, and returns how many bytes it read
// and the line number of its incomplete last line (0: none).
func readFile(path string, limit int64, fn func(*Event) error) (int64, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = f.Close() }()
	var r io.Reader = f
	if limit >= 0 {
		r = io.LimitReader(f, limit)
	}
	return readLog(r, path, fn)
}

// readLog calls fn with each event of r that the replay takes, and
// returns how many bytes of whole lines it read. A last line without a
// newline that is not JSON is a line still being written: it is left
// out, and its number returned.
func readLog(r io.Reader, name string, fn func(*Event) error) (read int64, incomplete int, err error) {
	var last int // the length of the line scanned last, when it has no newline
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		adv, tok, err := bufio.ScanLines(data, atEOF)
		read += int64(adv)
		if last = 0; tok != nil && atEOF && bytes.IndexByte(data, '\n') < 0 {
			last = adv
		}
		return adv, tok, err
	})
	for n := 1; sc.Scan(); n++ {
		ev, err := parseLine(sc.Bytes(), name, n)
		var syntax *json.SyntaxError
		if last > 0 && errors.As(err, &syntax) {
			return read - int64(last), n, nil
		}
		if err != nil {
			return read, 0, err
		}
		if ev == nil {
			continue
		}
		if err := fn(ev); err != nil {
			return read, 0, err
		}
	}
	if err := sc.Err(); err != nil {
		return read, 0, fmt.Errorf("%s: %w", name, err)
	}
	return read, 0, nil
}

// parseLine is the event of line n, nil when the replay does not take it
// (an empty line, a read, another stage).
func parseLine(raw []byte, name string, n int) (*Event, error) {
	line := bytes.TrimSpace(raw)
	if len(line) == 0 {
		return nil, nil
	}
	ev := &Event{Line: n, File: name}
	if err := json.Unmarshal(line, &ev.Event); err != nil {
		return nil, fmt.Errorf("%s:%d: not an audit event: %w", name, n, err)
	}
	if ev.Kind != audit.KindEvent || ev.APIVersion != audit.APIVersion {
		return nil, fmt.Errorf("%s:%d: not an %s Event (kind %q, apiVersion %q)", name, n, audit.APIVersion, ev.Kind, ev.APIVersion)
	}
	if ev.Stage == audit.StageResponseComplete && mutatingVerbs[ev.Verb] && ev.ObjectRef != nil && ev.ObjectRef.Resource != "" {
		return ev, nil
	}
	return nil, nil
}

// query is the request URI's query.
func (e *Event) query() url.Values {
	u, err := url.ParseRequestURI(e.RequestURI)
	if err != nil {
		return url.Values{}
	}
	return u.Query()
}

// namespace is the namespace of the object the request is on: none for a
// Namespace (whose own name the request URI's namespace is).
func (e *Event) namespace() string {
	if e.ObjectRef.APIGroup == "" && e.ObjectRef.Resource == "namespaces" {
		return ""
	}
	return e.ObjectRef.Namespace
}

// dryRun reports whether the recorded request was a dry run.
func (e *Event) dryRun() bool {
	return len(e.query()["dryRun"]) > 0
}

// code is the recorded response code (200 when the event has none).
func (e *Event) code() int32 {
	if e.ResponseStatus == nil || e.ResponseStatus.Code == 0 {
		return 200
	}
	return e.ResponseStatus.Code
}

// succeeded reports whether the recorded request succeeded.
func (e *Event) succeeded() bool { return e.code() < 300 }

// Ref names the request in a report.
func (e *Event) Ref() RequestRef {
	o := e.ObjectRef
	user := e.User.Username
	if e.ImpersonatedUser != nil {
		user = e.ImpersonatedUser.Username
	}
	name := o.Name
	if name == "" && e.Verb == "create" {
		name = generatedName(e.RequestObject)
	}
	return RequestRef{AuditID: e.AuditID, Verb: e.Verb, APIGroup: o.APIGroup, APIVersion: o.APIVersion, Resource: o.Resource,
		Subresource: o.Subresource, Namespace: e.namespace(), Name: name, User: user,
		Time: time.Time(e.RequestReceivedTimestamp).UTC().Format("2006-01-02T15:04:05.000000Z"), File: e.File, Line: e.Line}
}

// generatedName is a created object's name, or its generateName and "*".
func generatedName(raw json.RawMessage) string {
	var m struct {
		Metadata struct {
			Name         string `json:"name"`
			GenerateName string `json:"generateName"`
		} `json:"metadata"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	if m.Metadata.Name == "" && m.Metadata.GenerateName != "" {
		return m.Metadata.GenerateName + "*"
	}
	return m.Metadata.Name
}

// RequestRef names a recorded request.
type RequestRef struct {
	AuditID     string `json:"auditID"`
	Verb        string `json:"verb"`
	APIGroup    string `json:"apiGroup,omitempty"`
	APIVersion  string `json:"apiVersion,omitempty"`
	Resource    string `json:"resource"`
	Subresource string `json:"subresource,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name,omitempty"`
	User        string `json:"user,omitempty"`
	// Time is when the request was received.
	Time string `json:"time,omitempty"`
	// File and Line are where its event is in the log.
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
}

// String is "verb resource ns/name".
func (r RequestRef) String() string {
	res := r.Resource
	if r.APIGroup != "" {
		res += "." + r.APIGroup
	}
	if r.Subresource != "" {
		res += "/" + r.Subresource
	}
	name := r.Name
	if r.Namespace != "" {
		name = r.Namespace + "/" + name
	}
	return strings.TrimSpace(r.Verb + " " + res + " " + name)
}
