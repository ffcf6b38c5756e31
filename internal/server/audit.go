package server

import (
	"context"
	"encoding/json"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/audit"
)

// newAuditor returns the auditor of --audit-log-path and
// --audit-policy-file, or nil when auditing is off.
func newAuditor(o Options, events prometheus.Counter) (*audit.Auditor, func() error, error) {
	if o.AuditLogPath == "" {
		return nil, func() error { return nil }, nil
	}
	policy := &audit.Policy{}
	if o.AuditPolicyFile != "" {
		p, err := audit.LoadPolicy(o.AuditPolicyFile)
		if err != nil {
			return nil, nil, err
		}
		policy = p
	}
	w, err := audit.NewLogWriter(o.AuditLogPath)
	if err != nil {
		return nil, nil, err
	}
	return audit.New(audit.Options{Policy: policy, Sink: countedSink{next: w, events: events}}), w.Close, nil
}

// newAuditEvents registers kube-apiserver's apiserver_audit_event_total on
// reg, served (at 0) without an audit log too, as upstream's.
func newAuditEvents(reg prometheus.Registerer) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "apiserver_audit_event_total",
		Help: "[ALPHA] Counter of audit events generated and sent to the audit backend."})
	reg.MustRegister(c)
	return c
}

// countedSink counts each event the policy keeps as it is handed to the
// log, written or not, as upstream counts an event before its backend.
type countedSink struct {
	next   audit.Sink
	events prometheus.Counter
}

func (s countedSink) WriteEvent(ev *audit.Event) error {
	s.events.Inc()
	return s.next.WriteEvent(ev)
}

// auditRequestDone writes the audit events of a finished request.
func auditRequestDone(a *audit.Auditor, logErr func(error)) func(context.Context, *apiserver.RequestEvent) {
	return func(_ context.Context, ev *apiserver.RequestEvent) {
		if err := a.LogRequest(toAuditRequest(ev)); err != nil {
			logErr(err)
		}
	}
}

func toAuditRequest(ev *apiserver.RequestEvent) *audit.Request {
	r := &audit.Request{
		AuditID: ev.AuditID, ReceivedAt: ev.Started, FinishedAt: ev.Finished, RequestURI: ev.RequestURI,
		Verb: ev.Verb, User: ev.User, ImpersonatedUser: ev.Impersonated, SourceIPs: audit.SourceIPs(ev.HTTPRequest),
		UserAgent: ev.UserAgent, Path: ev.Path, Admission: ev.Record,
		ResponseStatus: &audit.ResponseStatus{Code: int32(ev.Code)},
	}
	if ev.Resource != "" {
		r.Resource = &audit.ObjectReference{Resource: ev.Resource, Namespace: ev.Namespace, Name: ev.Name,
			APIGroup: ev.APIGroup, APIVersion: ev.APIVersion, Subresource: ev.Subresource}
	}
	if st := ev.Status; st != nil {
		r.ResponseStatus.Status, r.ResponseStatus.Message, r.ResponseStatus.Reason = st.Status, st.Message, string(st.Reason)
		if st.Details != nil {
			r.ResponseStatus.Details, _ = json.Marshal(st.Details)
		}
	}
	if ev.RequestObject != nil {
		r.RequestObject, _ = json.Marshal(ev.RequestObject)
	}
	if ev.ResponseObject != nil {
		r.ResponseObject, _ = json.Marshal(ev.ResponseObject)
	}
	return r
}
