package audit

import (
	"errors"
	"time"
)

// Options configure an Auditor.
type Options struct {
	// Policy decides each request's level; nil audits nothing.
	Policy *Policy
	// Sink receives the events; nil audits nothing.
	Sink Sink
	// Now stamps events whose Request has no FinishedAt; defaults to
	// time.Now.
	Now func() time.Time
}

// Auditor applies a policy to requests and writes their events.
type Auditor struct {
	policy *Policy
	sink   Sink
	now    func() time.Time
}

// New returns an Auditor for opts.
func New(opts Options) *Auditor {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Auditor{policy: opts.Policy, sink: opts.Sink, now: opts.Now}
}

// Evaluate returns what the policy decides for r. It depends only on r's
// user, verb and URL, so it is the same at every stage.
func (a *Auditor) Evaluate(r *Request) RequestConfig {
	if a == nil || a.sink == nil {
		return RequestConfig{Level: LevelNone}
	}
	return a.policy.Evaluate(r.Attributes())
}

// LogStage writes r's event for one stage, unless the level is None or the
// policy omits the stage. Servers that write RequestReceived when a request
// arrives, or ResponseStarted for long-running requests, call it directly.
func (a *Auditor) LogStage(r *Request, stage Stage) error {
	rc := a.Evaluate(r)
	if rc.Level == LevelNone || rc.Omits(stage) {
		return nil
	}
	ev := NewEvent(r, rc, stage)
	if stage != StageRequestReceived && r.FinishedAt.IsZero() {
		ev.StageTimestamp = MicroTime(a.now())
	}
	return a.sink.WriteEvent(ev)
}

// LogRequest writes the events of a finished request: RequestReceived, then
// ResponseComplete, or Panic when r.Panic is set. It returns after the
// events are written, so calling it before the response is sent makes them
// visible to a client that reads the log afterwards.
func (a *Auditor) LogRequest(r *Request) error {
	final := StageResponseComplete
	if r.Panic != nil {
		final = StagePanic
	}
	return errors.Join(a.LogStage(r, StageRequestReceived), a.LogStage(r, final))
}
