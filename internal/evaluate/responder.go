package evaluate

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

// responder answers redirected webhooks from their recorded responses,
// over HTTPS on 127.0.0.1.
type responder struct {
	srv       *webhooktest.Server
	responses Responses

	mu    sync.Mutex
	hooks []*redirected
}

// redirected is one webhook pointed at the responder.
type redirected struct {
	name     string // <configuration>/<webhook>
	recorded *Recorded
	calls    int
}

func startResponder(r Responses) (*responder, error) {
	rs := &responder{responses: r}
	srv, err := webhooktest.NewUnstartedServer(nil, http.HandlerFunc(rs.serve))
	if err != nil {
		return nil, err
	}
	srv.StartTLS()
	rs.srv = srv
	return rs, nil
}

func (rs *responder) close() { rs.srv.Close() }

// redirect returns objs with every webhook that has recorded responses
// pointed at the responder; a recorded webhook that no configuration has
// is an error (a misspelt name would otherwise call the real one).
func (rs *responder) redirect(objs []Object) ([]Object, error) {
	used := map[string]bool{}
	out := make([]Object, len(objs))
	for i, o := range objs {
		out[i] = o
		if !isWebhookConfiguration(o) {
			continue
		}
		u := o.DeepCopy()
		hooks, _ := u.Object["webhooks"].([]any)
		for _, h := range hooks {
			if hook, ok := h.(map[string]any); ok {
				rs.point(u.GetName(), hook, used)
			}
		}
		out[i] = Object{Unstructured: u, Source: o.Source}
	}
	var unused []string
	for key := range rs.responses {
		if !used[key] {
			unused = append(unused, key)
		}
	}
	if len(unused) > 0 {
		slices.Sort(unused)
		return nil, &ConfigError{Err: fmt.Errorf("recorded responses for %s: no webhook configuration given has such a webhook", strings.Join(unused, ", "))}
	}
	return out, nil
}

// point redirects one webhook of configuration cfg when it has responses.
func (rs *responder) point(cfg string, hook map[string]any, used map[string]bool) {
	name, _ := hook["name"].(string)
	key := cfg + "/" + name
	rec, ok := rs.responses[key]
	if !ok {
		key = name
		if rec, ok = rs.responses[name]; !ok {
			return
		}
	}
	used[key] = true
	rs.mu.Lock()
	rs.hooks = append(rs.hooks, &redirected{name: cfg + "/" + name, recorded: rec})
	path := "/hook/" + strconv.Itoa(len(rs.hooks)-1)
	rs.mu.Unlock()
	hook["clientConfig"] = map[string]any{"url": rs.srv.URL + path, "caBundle": base64.StdEncoding.EncodeToString(rs.srv.CABundle())}
}

// review is the part of an AdmissionReview the responder reads.
type review struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Request    *struct {
		UID string `json:"uid"`
	} `json:"request"`
}

func (rs *responder) serve(w http.ResponseWriter, r *http.Request) {
	hook, n := rs.call(r.URL.Path)
	if hook == nil {
		http.Error(w, "no such webhook", http.StatusNotFound)
		return
	}
	var in review
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err := json.Unmarshal(body, &in); err != nil || in.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	resp, ok := hook.recorded.response(n)
	if !ok {
		msg := fmt.Sprintf("admitd eval: webhook %s has %d recorded responses and was called %d times", hook.name, len(hook.recorded.Calls), n+1)
		http.Error(w, msg, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(reviewOut(in, resp))
}

// call finds the webhook of path and counts its call; n is the call's
// number from 0.
func (rs *responder) call(path string) (*redirected, int) {
	i, err := strconv.Atoi(strings.TrimPrefix(path, "/hook/"))
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if err != nil || i < 0 || i >= len(rs.hooks) {
		return nil, 0
	}
	h := rs.hooks[i]
	h.calls++
	return h, h.calls - 1
}

func reviewOut(in review, r Response) map[string]any {
	resp := map[string]any{"uid": in.Request.UID, "allowed": r.Allowed}
	if r.Status != nil {
		resp["status"] = r.Status
	}
	if len(r.Patch) > 0 {
		resp["patch"] = base64.StdEncoding.EncodeToString(r.Patch)
		resp["patchType"] = r.PatchType
	}
	if len(r.Warnings) > 0 {
		resp["warnings"] = r.Warnings
	}
	if len(r.AuditAnnotations) > 0 {
		resp["auditAnnotations"] = r.AuditAnnotations
	}
	return map[string]any{"apiVersion": in.APIVersion, "kind": in.Kind, "response": resp}
}

func isWebhookConfiguration(o Object) bool {
	gvk := o.GroupVersionKind()
	return gvk.Group == "admissionregistration.k8s.io" &&
		(gvk.Kind == "MutatingWebhookConfiguration" || gvk.Kind == "ValidatingWebhookConfiguration")
}

// checkServiceReferences refuses webhooks behind a Service that the
// service map (a JSON object of "<svc>.<ns>.svc" to host:port, serve's
// --service-map) does not name: eval has no cluster network to reach them.
func checkServiceReferences(objs []Object, serviceMap string) error {
	mapped := map[string]string{}
	if serviceMap != "" {
		data, err := os.ReadFile(serviceMap)
		if err != nil {
			return &ConfigError{Err: err}
		}
		if err := json.Unmarshal(data, &mapped); err != nil {
			return &ConfigError{Err: fmt.Errorf("%s: %w", serviceMap, err)}
		}
	}
	for _, o := range objs {
		if !isWebhookConfiguration(o) {
			continue
		}
		hooks, _ := o.Object["webhooks"].([]any)
		for _, h := range hooks {
			if err := checkServiceReference(o, h, mapped); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkServiceReference(o Object, h any, mapped map[string]string) error {
	hook, _ := h.(map[string]any)
	cc, _ := hook["clientConfig"].(map[string]any)
	svc, ok := cc["service"].(map[string]any)
	if !ok {
		return nil
	}
	name, _ := svc["name"].(string)
	ns, _ := svc["namespace"].(string)
	if _, ok := mapped[name+"."+ns+".svc"]; ok {
		return nil
	}
	hookName, _ := hook["name"].(string)
	return &ConfigError{Err: fmt.Errorf("%s: webhook %q of %s %s calls Service %s/%s, which eval cannot reach: record its answers in --webhook-responses, map the Service with --service-map, or let the call fail as on a cluster where the Service does not answer with --call-unreachable-webhooks",
		o.Source, hookName, o.GetKind(), o.GetName(), ns, name)}
}
