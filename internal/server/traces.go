package server

import (
	"context"
	"slices"
	"strings"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/pkg/admission/trace"
)

// mountTraces keeps the admission trace of every request that ran
// admission in a ring of o.AdmissionTraceBuffer entries holding at most
// o.AdmissionTraceBytes, and serves it at
// trace.Path (behind the server's authentication and authorization: a
// non-resource URL, granted by RBAC with trace.ClusterRoleRules; only
// system:masters by default). observe, if not nil, is shown every kept trace.
func mountTraces(cfg *apiserver.Config, o Options, observe func(*trace.Entry, *apiserver.RequestEvent)) *trace.Ring {
	size := o.AdmissionTraceBuffer
	switch {
	case size == 0:
		size = trace.DefaultRingSize
	case size < 0:
		return nil
	}
	maxBytes := o.AdmissionTraceBytes
	if maxBytes <= 0 {
		maxBytes = trace.DefaultRingBytes
	}
	ring := trace.NewRingBytes(size, maxBytes)
	h := trace.Handler(ring)
	cfg.Extra[trace.Path] = h
	cfg.Extra[trace.Path+"/"] = h
	next := cfg.OnRequestDone
	cfg.OnRequestDone = func(ctx context.Context, ev *apiserver.RequestEvent) {
		if e := keepTrace(ring, ev); e != nil && observe != nil {
			observe(e, ev)
		}
		if next != nil {
			next(ctx, ev)
		}
	}
	return ring
}

// keepTrace keeps the trace of a request that ran admission (the record
// is done with: the audit log, called next, only reads it) and returns it.
func keepTrace(ring *trace.Ring, ev *apiserver.RequestEvent) *trace.Entry {
	if ev.Record == nil || ev.Resource == "" {
		return nil
	}
	out := trace.Outcome{Code: ev.Code, Duration: ev.Finished.Sub(ev.Started)}
	if ev.Status != nil {
		out.Message = ev.Status.Message
	}
	e := trace.Capture(requestFacts(ev), out, ev.Record)
	ring.Add(e)
	return e
}

func requestFacts(ev *apiserver.RequestEvent) trace.Request {
	q := trace.Request{AuditID: ev.AuditID, Time: ev.Started, User: ev.User.Username, Groups: ev.User.Groups,
		Verb: ev.Verb, Operation: operationOf(ev.Verb), APIGroup: ev.APIGroup, APIVersion: ev.APIVersion,
		Resource: ev.Resource, Subresource: ev.Subresource, Namespace: ev.Namespace, Name: ev.Name}
	if ev.Impersonated != nil {
		// ev.User is the requester; the request acts as the impersonated user
		q.User, q.Groups, q.Impersonator = ev.Impersonated.Username, ev.Impersonated.Groups, ev.User.Username
	} else {
		q.Client = trace.ClientOf(q.User, ev.UserAgent)
	}
	if r := ev.HTTPRequest; r != nil && strings.Contains(r.URL.RawQuery, "dryRun") {
		q.DryRun = slices.Contains(r.URL.Query()["dryRun"], "All")
	}
	return q
}

// operationOf is the admission operation of an API verb.
func operationOf(verb string) string {
	switch verb {
	case "create":
		return "CREATE"
	case "update", "patch":
		return "UPDATE"
	case "delete", "deletecollection":
		return "DELETE"
	case "connect":
		return "CONNECT"
	}
	return ""
}
