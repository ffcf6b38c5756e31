package replay

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// APIVersion and Kind of a Report's JSON form.
const (
	APIVersion = "replay.admitd.io/v1alpha1"
	Kind       = "ReplayReport"
)

// Report is how the replayed decisions differ from the recorded (or the
// baseline's) ones.
type Report struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// ComparedWith is "recorded" (the log's decisions) or "baseline".
	ComparedWith string `json:"comparedWith"`
	// Requests is how many create, update, patch and delete requests the
	// log has; Replayed how many were replayed, Same how many of those got
	// the same decision, object and admission annotations.
	Requests int `json:"requests"`
	Replayed int `json:"replayed"`
	Same     int `json:"same"`
	// FollowedOnly are the requests before --since-time: not replayed,
	// their recorded results put in.
	FollowedOnly int `json:"followedOnly,omitempty"`
	// NowDenied were allowed and would now be refused; NowAllowed the
	// reverse.
	NowDenied  []Difference `json:"nowDenied"`
	NowAllowed []Difference `json:"nowAllowed"`
	// Changed were allowed both times with different objects stored.
	Changed []Difference `json:"changed"`
	// Annotations got the same decision and object, with different
	// admission audit annotations.
	Annotations []Difference `json:"annotations"`
	// NotReplayed are requests that could not be replayed, and why.
	NotReplayed []NotReplayed `json:"notReplayed,omitempty"`
	// Skipped counts the requests not replayed on purpose, by reason.
	Skipped map[string]int `json:"skipped,omitempty"`
	// SetupWarnings are the server's warnings while the configuration was
	// created, and objects of the log the evaluation could not hold.
	SetupWarnings []string `json:"setupWarnings,omitempty"`
}

// Difference is one request whose replay differs.
type Difference struct {
	Request RequestRef `json:"request"`
	// Before is the recorded (or baseline) decision, After the replay's.
	Before Decision `json:"before"`
	After  Decision `json:"after"`
	// By are the webhooks, policies and plugins of the replay that denied
	// (NowDenied) or changed the object.
	By []string `json:"by,omitempty"`
	// Patch is the JSON patch from the recorded object to the replayed
	// one.
	Patch             json.RawMessage   `json:"patch,omitempty"`
	AnnotationsBefore map[string]string `json:"annotationsBefore,omitempty"`
	AnnotationsAfter  map[string]string `json:"annotationsAfter,omitempty"`
	// Note says how the replay had to differ from the recorded request.
	Note string `json:"note,omitempty"`
}

// NotReplayed is a request the replay could not send.
type NotReplayed struct {
	Request RequestRef `json:"request"`
	Reason  string     `json:"reason"`
}

func newReport(requests int, baseline bool) *Report {
	r := &Report{APIVersion: APIVersion, Kind: Kind, ComparedWith: "recorded", Requests: requests,
		NowDenied: []Difference{}, NowAllowed: []Difference{}, Changed: []Difference{}, Annotations: []Difference{},
		Skipped: map[string]int{}}
	if baseline {
		r.ComparedWith = "baseline"
	}
	return r
}

func (r *Report) skip(reason string) { r.Skipped[reason]++ }

func (r *Report) notReplayed(ref RequestRef, reason string) {
	r.NotReplayed = append(r.NotReplayed, NotReplayed{Request: ref, Reason: reason})
}

func (r *Report) finish(setupWarnings []string) {
	r.SetupWarnings = append(setupWarnings, r.SetupWarnings...)
	if len(r.Skipped) == 0 {
		r.Skipped = nil
	}
}

// Differences is how many requests differ.
func (r *Report) Differences() int {
	return len(r.NowDenied) + len(r.NowAllowed) + len(r.Changed) + len(r.Annotations)
}

// What --fail-on compares with.
const (
	FailOnDeny   = "deny"
	FailOnChange = "change"
	FailOnNone   = "none"
)

// ValidFailOn reports whether s is a --fail-on value.
func ValidFailOn(s string) bool { return s == FailOnDeny || s == FailOnChange || s == FailOnNone }

// Fails reports whether the report has anything at failOn: a request now
// denied (deny), any difference (change), nothing (none).
func (r *Report) Fails(failOn string) bool {
	switch failOn {
	case FailOnDeny:
		return len(r.NowDenied) > 0
	case FailOnChange:
		return r.Differences() > 0
	}
	return false
}

// NothingReplayed says why no request was compared, "" when some were:
// a --fail-on that passes on a replay of nothing would pass a candidate
// it never tried.
func (r *Report) NothingReplayed() string {
	if r.Replayed > 0 {
		return ""
	}
	if r.Requests == 0 {
		return "nothing was replayed: the audit log has no create, update, patch or delete requests on resources " +
			"(ResponseComplete events); record them with an audit policy rule at level RequestResponse"
	}
	var why []string
	for _, k := range r.skippedReasons() {
		why = append(why, fmt.Sprintf("%d %s", r.Skipped[k], k))
	}
	if n := len(r.NotReplayed); n > 0 {
		why = append(why, fmt.Sprintf("%d that could not be replayed", n))
	}
	if r.FollowedOnly > 0 {
		why = append(why, fmt.Sprintf("%d before --since-time", r.FollowedOnly))
	}
	return fmt.Sprintf("nothing was replayed of the audit log's %d create, update, patch and delete requests (%s): "+
		"record the requests to replay with an audit policy rule at level RequestResponse (Request is enough to replay, "+
		"not to compare objects), on their resources and not only their subresources", r.Requests, strings.Join(why, "; "))
}

// skippedReasons are the reasons of Skipped, sorted.
func (r *Report) skippedReasons() []string {
	out := make([]string, 0, len(r.Skipped))
	for k := range r.Skipped {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
