package dashboard

import (
	"cmp"
	"time"

	"github.com/admitd/admitd/pkg/admission/trace"
)

// Decision is one admission decision as the stream and the recent list
// show it: the request's facts, no object and no message.
type Decision struct {
	// Seq numbers the events of a server's stream, from 1.
	Seq     uint64    `json:"seq,omitempty"`
	AuditID string    `json:"auditID"`
	Time    time.Time `json:"time"`
	User    string    `json:"user"`
	// Client names the cluster component that sent it (trace.ClientOf).
	Client      string `json:"client,omitempty"`
	Verb        string `json:"verb"`
	APIGroup    string `json:"apiGroup,omitempty"`
	Resource    string `json:"resource"`
	Subresource string `json:"subresource,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name,omitempty"`
	DryRun      bool   `json:"dryRun,omitempty"`
	// Decision is Allowed, Denied or Error (see package trace).
	Decision string `json:"decision"`
	// RejectedBy is the plugin that denied the request.
	RejectedBy string `json:"rejectedBy,omitempty"`
	// LatencyMillis is the whole request's, in milliseconds.
	LatencyMillis float64 `json:"latencyMillis"`
}

func decisionOf(f finished) Decision {
	q := f.entry.Request()
	d := Decision{AuditID: q.AuditID, Time: q.Time, User: q.User, Client: q.Client, Verb: q.Verb, APIGroup: q.APIGroup,
		Resource: q.Resource, Subresource: q.Subresource, Namespace: q.Namespace, Name: q.Name, DryRun: q.DryRun,
		Decision: f.entry.Decision(), LatencyMillis: millis(f.took)}
	if f.rec != nil {
		d.RejectedBy = f.rec.RejectedBy()
		if name, op, dryRun := f.rec.Request(); op != "" {
			// a create's name is known only from its object
			d.Name = cmp.Or(d.Name, name)
			d.DryRun = d.DryRun || dryRun
		}
	}
	return d
}

// decisionOfTrace is the Decision of a kept trace (the recent list).
func decisionOfTrace(t *trace.Trace) Decision {
	q := t.Request
	d := Decision{AuditID: q.AuditID, Time: q.Time, User: q.User, Client: q.Client, Verb: q.Verb, APIGroup: q.APIGroup,
		Resource: q.Resource, Subresource: q.Subresource, Namespace: q.Namespace, Name: q.Name, DryRun: q.DryRun,
		Decision: t.Decision, RejectedBy: t.RejectedBy}
	if took, err := time.ParseDuration(t.Duration); err == nil {
		d.LatencyMillis = millis(took)
	}
	return d
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
