package evaluate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/admitd/admitd/pkg/admission/trace"
)

// Run evaluates in: starts a server, creates in.Objects, sends the request
// and returns what it got. Errors in the input are *ConfigError.
func Run(ctx context.Context, in Input) (*Result, error) {
	if err := checkRequest(&in.Request); err != nil {
		return nil, err
	}
	objects, responder, err := prepareWebhooks(in.Objects, in.Responses, in.Server)
	if err != nil {
		return nil, err
	}
	if responder != nil {
		defer responder.close()
	}
	inst, err := startServer(ctx, in.Server, in.Request.Impersonator)
	if err != nil {
		return nil, err
	}
	defer inst.close()
	return evaluateOn(ctx, inst, objects, in.Request)
}

// prepareWebhooks points the webhooks with recorded responses at a
// responder it starts (nil without responses), and refuses webhooks
// behind Services nothing answers for unless c lets them be called.
func prepareWebhooks(objects []Object, responses Responses, c ServerConfig) ([]Object, *responder, error) {
	var rs *responder
	if responses != nil {
		var err error
		if rs, err = startResponder(responses); err != nil {
			return nil, nil, err
		}
		if objects, err = rs.redirect(objects); err != nil {
			rs.close()
			return nil, nil, err
		}
	}
	if !c.CallUnreachableWebhooks {
		if err := checkServiceReferences(objects, c.ServiceMap); err != nil {
			if rs != nil {
				rs.close()
			}
			return nil, nil, err
		}
	}
	return objects, rs, nil
}

func checkRequest(q *Request) error {
	q.Operation = strings.ToUpper(q.Operation)
	switch q.Operation {
	case "":
		q.Operation = Create
	case Create, Update, Delete:
	case Connect:
		return checkConnect(q)
	default:
		return &ConfigError{Err: fmt.Errorf("the operation must be CREATE, UPDATE, DELETE or CONNECT, not %q", q.Operation)}
	}
	if q.Object == nil {
		return &ConfigError{Err: errors.New("the request has no object")}
	}
	if q.Object.GetAPIVersion() == "" || q.Object.GetKind() == "" {
		return &ConfigError{Err: errors.New("the request's object needs apiVersion and kind")}
	}
	if q.Name != "" && q.Name != q.Object.GetName() {
		q.Object = q.Object.DeepCopy()
		q.Object.SetName(q.Name)
	}
	if q.Object.GetName() == "" && q.Operation != Create {
		return &ConfigError{Err: fmt.Errorf("the %s needs the object's metadata.name", q.Operation)}
	}
	return checkImpersonator(q.Impersonator)
}

func evaluateOn(ctx context.Context, inst *instance, objects []Object, q Request) (*Result, error) {
	c, err := inst.cluster()
	if err != nil {
		return nil, err
	}
	if err := c.seed(ctx, objects); err != nil {
		return nil, err
	}
	var ans *sent
	sentAt := time.Now()
	if q.Operation == Connect {
		ans, err = c.connect(ctx, inst, q)
	} else if err = c.prepareTarget(ctx, q); err == nil {
		ans, err = c.send(ctx, inst, q)
	}
	if err != nil {
		return nil, err
	}
	t, err := fetchTrace(ctx, inst.admin, ans.auditID, traceWait(ans))
	if err != nil {
		return nil, err
	}
	r := result(q, ans, t)
	r.SetupWarnings = c.setupWarnings.list()
	if inst.expandWorkloads && ans.object != nil && !q.DryRun && (q.Operation == Create || q.Operation == Update) {
		if r.CreatedByControllers, err = expandWorkload(ctx, inst.admin, ans.object.GetNamespace(), sentAt); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// prepareTarget creates the request's old object, when given, and waits
// for the namespace's default ServiceAccount.
func (c *cluster) prepareTarget(ctx context.Context, q Request) error {
	if q.OldObject != nil {
		old := q.OldObject.DeepCopy()
		if q.Namespace != "" {
			old.SetNamespace(q.Namespace)
		}
		if err := c.put(ctx, Object{Unstructured: old, Source: "the old object"}); err != nil {
			return err
		}
	}
	target := q.Object.DeepCopy()
	if _, err := c.target(target, q); err != nil {
		return &ConfigError{Err: fmt.Errorf("the request: %w", err)}
	}
	if ns := target.GetNamespace(); ns != "" {
		c.awaitServiceAccount(ctx, ns)
	}
	return nil
}

func result(q Request, ans *sent, t *trace.Trace) *Result {
	r := &Result{APIVersion: ResultAPIVersion, Kind: ResultKind, Allowed: ans.status == nil, Status: ans.status,
		Warnings: ans.warnings, Trace: t, sent: q.Object, AuditAnnotations: map[string]string{}}
	if ans.object != nil && q.Operation != Delete {
		r.Object = ans.object.Object
	}
	switch {
	case t != nil:
		r.Decision = t.Decision
		for k, v := range t.AuditAnnotations {
			r.AuditAnnotations[k] = v
		}
	case r.Allowed:
		r.Decision = trace.Allowed
	default:
		r.Decision = trace.Error
	}
	if q.Operation == Connect && admitted(t) {
		// refused after admission: eval opens no stream
		r.Allowed, r.Decision, r.Status, r.Connection = true, trace.Allowed, nil, ans.status
	}
	if r.Warnings == nil {
		r.Warnings = []string{}
	}
	return r
}

// admitted reports whether admission ran and admitted the request.
func admitted(t *trace.Trace) bool {
	return t != nil && t.Decision != trace.Denied
}

// traceWait is how long to wait for the trace of an answer: a trace is
// kept just after the response; a request refused by authentication or
// authorization never ran admission and leaves none.
func traceWait(ans *sent) time.Duration {
	if st := ans.status; st != nil && (st.Code == 401 || st.Code == 403 && strings.Contains(st.Message, "\" cannot ")) {
		return 50 * time.Millisecond
	}
	return time.Second
}

// fetchTrace reads the request's trace, waiting up to wait for it; nil
// when there is none (the request did not run admission).
func fetchTrace(ctx context.Context, admin *rest.Config, auditID string, wait time.Duration) (*trace.Trace, error) {
	hc, err := rest.HTTPClientFor(admin)
	if err != nil {
		return nil, err
	}
	return trace.Fetch(ctx, hc, admin.Host, auditID, wait)
}
