package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

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

// LoadLog reads the audit.k8s.io/v1 Events of the files (JSON lines, as
// kube-apiserver's and admitd serve's --audit-log-path write them) and
// returns the ResponseComplete events of create, update, patch and delete
// requests on resources, in the order of the files and lines. Other
// events (reads, other stages) are left out; a line that is not an Event
// is an error.
func LoadLog(paths ...string) ([]*Event, error) {
	var out []*Event
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		evs, err := readLog(f, p)
		_ = f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, evs...)
	}
	return out, nil
}

func readLog(r io.Reader, name string) ([]*Event, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var out []*Event
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		ev := &Event{Line: n, File: name}
		if err := json.Unmarshal(line, &ev.Event); err != nil {
			return nil, fmt.Errorf("%s:%d: not an audit event: %w", name, n, err)
		}
		if ev.Kind != audit.KindEvent || ev.APIVersion != audit.APIVersion {
			return nil, fmt.Errorf("%s:%d: not an %s Event (kind %q, apiVersion %q)", name, n, audit.APIVersion, ev.Kind, ev.APIVersion)
		}
		if ev.Stage == audit.StageResponseComplete && mutatingVerbs[ev.Verb] && ev.ObjectRef != nil && ev.ObjectRef.Resource != "" {
			out = append(out, ev)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
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
