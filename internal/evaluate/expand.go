package evaluate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/pkg/admission/trace"
)

// WorkloadControllers are the kube-controller-manager controllers
// --expand-workloads runs in the in-process server: those that create a
// workload's Jobs, ReplicaSets and Pods.
var WorkloadControllers = []string{controllers.DeploymentControllerName, controllers.ReplicaSetControllerName,
	controllers.ReplicationControllerControllerName, "statefulset-controller", "daemonset-controller", "job-controller",
	"cronjob-controller"}

// ControllerRequest is what a controller sent because of the request
// (--expand-workloads): its creates, identical ones (a controller
// retrying a refused pod) counted once.
type ControllerRequest struct {
	// Client is the controller (trace.ClientOf), e.g.
	// "kube-controller-manager (replicaset-controller)".
	Client    string `json:"client"`
	Verb      string `json:"verb"`
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	// Name is the first such request's object name.
	Name     string `json:"name,omitempty"`
	Decision string `json:"decision"`
	Message  string `json:"message,omitempty"`
	// Count is how many identical requests (same controller, resource,
	// decision and message) were sent.
	Count int `json:"count"`
	// Trace is the first one's admission trace.
	Trace *trace.Trace `json:"trace"`
}

// Expansion bounds: how long the controllers may stay quiet before the
// expansion is taken as complete, and how long it may take in all.
const (
	expandQuiet = time.Second
	expandLimit = 10 * time.Second
)

// expandWorkload collects the creates the workload controllers sent after
// the request (started at since) in namespace, until none came for
// expandQuiet (at most expandLimit).
func expandWorkload(ctx context.Context, admin *rest.Config, namespace string, since time.Time) ([]ControllerRequest, error) {
	hc, err := rest.HTTPClientFor(admin)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(expandLimit)
	seen, quietSince := -1, time.Now()
	var got []ControllerRequest
	for time.Now().Before(deadline) {
		traces, err := listTraces(ctx, hc, admin.Host, namespace)
		if err != nil {
			return nil, err
		}
		got = controllerRequests(traces, since)
		if n := countRequests(got); n != seen {
			seen, quietSince = n, time.Now()
		} else if time.Since(quietSince) >= expandQuiet {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return got, nil
}

func countRequests(rs []ControllerRequest) int {
	n := 0
	for _, r := range rs {
		n += r.Count
	}
	return n
}

// controllerRequests groups the creates controllers sent from since on,
// oldest first.
func controllerRequests(traces []*trace.Trace, since time.Time) []ControllerRequest {
	var out []ControllerRequest
	index := map[string]int{}
	for i := len(traces) - 1; i >= 0; i-- { // the list is newest first
		t := traces[i]
		q := t.Request
		if q.Verb != "create" || !strings.HasPrefix(q.Client, "kube-controller-manager") || q.Time.Before(since) {
			continue
		}
		resource := q.Resource
		if q.APIGroup != "" {
			resource += "." + q.APIGroup
		}
		key := strings.Join([]string{q.Client, resource, t.Decision, withoutObjectName(t.Message)}, "\x00")
		if j, ok := index[key]; ok {
			out[j].Count++
			continue
		}
		index[key] = len(out)
		out = append(out, ControllerRequest{Client: q.Client, Verb: q.Verb, Resource: resource, Namespace: q.Namespace,
			Name: q.Name, Decision: t.Decision, Message: t.Message, Count: 1, Trace: t})
	}
	return out
}

// objectName is the quoted name a Status message starts with
// (`pods "web-7d9f-x2v4q" is forbidden: ...`).
var objectName = regexp.MustCompile(`^(\S+) "[^"]*"`)

// withoutObjectName is a refusal's message without the object's name, so
// that the same refusal of pods with generated names is counted as one.
func withoutObjectName(message string) string {
	return objectName.ReplaceAllString(message, `$1 ""`)
}

// listTraces reads the server's kept traces of namespace, newest first.
func listTraces(ctx context.Context, hc *http.Client, host, namespace string) ([]*trace.Trace, error) {
	u := strings.TrimSuffix(host, "/") + trace.Path + "?namespace=" + url.QueryEscape(namespace)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &trace.FetchError{Code: resp.StatusCode, Body: body}
	}
	var list struct {
		Items []*trace.Trace `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("reading the traces: %w", err)
	}
	return list.Items, nil
}
