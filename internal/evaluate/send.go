package evaluate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// sent is the answer to the request, before the trace is read.
type sent struct {
	auditID  string
	object   *unstructured.Unstructured
	status   *metav1.Status
	warnings []string
}

// updateTries bounds how often an UPDATE is sent again because a
// controller of the server wrote the object between its read and the send.
const updateTries = 5

// send sends q as its user and returns the answer. The object's kind
// names the resource (unless q.Resource does); an UPDATE replaces the
// stored object, whatever resourceVersion and uid the object says (a
// review from a cluster names that cluster's uid, not the seeded copy's).
// An UPDATE refused with a conflict while the stored object changed (a
// controller wrote it, as the TTL controller annotates a new node) is sent
// again, as a new request with its own audit ID, so its trace and webhook
// calls are those of the answer.
func (c *cluster) send(ctx context.Context, in *instance, q Request) (*sent, error) {
	obj := q.Object.DeepCopy()
	gvr, err := c.target(obj, q)
	if err != nil {
		return nil, &ConfigError{Err: fmt.Errorf("the request: %w", err)}
	}
	if q.Operation != Update {
		return c.sendOnce(ctx, in, q, gvr, obj)
	}
	for try := 1; ; try++ {
		rv, err := c.takeStoredVersion(ctx, gvr, obj)
		if err != nil {
			return nil, err
		}
		out, err := c.sendOnce(ctx, in, q, gvr, obj.DeepCopy())
		if err != nil || try == updateTries || !refusedAsStale(out) {
			return out, err
		}
		if now, err := c.storedVersion(ctx, gvr, obj); err != nil || now == rv {
			return out, nil // the conflict is the answer, not a race
		}
	}
}

// refusedAsStale says whether the answer is a conflict.
func refusedAsStale(out *sent) bool {
	return out.status != nil && out.status.Reason == metav1.StatusReasonConflict
}

// takeStoredVersion gives obj the stored object's resourceVersion (and uid,
// when obj names one) and returns that resourceVersion.
func (c *cluster) takeStoredVersion(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (string, error) {
	cur, err := on(c.dyn, gvr, obj).Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return "", &ConfigError{Err: fmt.Errorf("UPDATE of %s %s: reading the stored object: %w", obj.GetKind(), name(obj), err)}
	}
	obj.SetResourceVersion(cur.GetResourceVersion())
	if obj.GetUID() != "" {
		obj.SetUID(cur.GetUID())
	}
	return cur.GetResourceVersion(), nil
}

// storedVersion is the stored object's resourceVersion now.
func (c *cluster) storedVersion(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (string, error) {
	cur, err := on(c.dyn, gvr, obj).Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return cur.GetResourceVersion(), nil
}

// sendOnce sends obj, the request of q, as q's user.
func (c *cluster) sendOnce(ctx context.Context, in *instance, q Request, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*sent, error) {
	out := &sent{auditID: uuid.NewString()}
	warnings := &warningCollector{}
	client, err := dynamic.NewForConfig(in.requestConfig(q, out.auditID, warnings))
	if err != nil {
		return nil, err
	}
	stored, reqErr := do(ctx, on(client, gvr, obj), q, obj)
	out.warnings = warnings.list()
	var status apierrors.APIStatus
	switch {
	case reqErr == nil:
		out.object = stored
	case errors.As(reqErr, &status):
		st := status.Status()
		out.status = &st
	default:
		return nil, fmt.Errorf("sending the request: %w", reqErr)
	}
	return out, nil
}

// target settles where q goes: q.Resource, else the resource of obj's
// kind; a namespaced object gets q.Namespace, else its own, else
// "default".
func (c *cluster) target(obj *unstructured.Unstructured, q Request) (schema.GroupVersionResource, error) {
	gvk := obj.GroupVersionKind()
	if q.Resource != nil {
		kind, err := c.mapper.KindFor(*q.Resource)
		if err != nil {
			return schema.GroupVersionResource{}, fmt.Errorf("the server does not serve %s", q.Resource)
		}
		gvk = kind
	}
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return schema.GroupVersionResource{}, fmt.Errorf("the server does not serve %s", gvk)
	}
	gvr := m.Resource
	if q.Resource != nil {
		gvr = *q.Resource
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		obj.SetNamespace("")
		return gvr, nil
	}
	switch {
	case q.Namespace != "":
		obj.SetNamespace(q.Namespace)
	case obj.GetNamespace() == "":
		obj.SetNamespace("default")
	}
	return gvr, nil
}

// on is gvr in obj's namespace, through client.
func on(client dynamic.Interface, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) dynamic.ResourceInterface {
	if ns := obj.GetNamespace(); ns != "" {
		return client.Resource(gvr).Namespace(ns)
	}
	return client.Resource(gvr)
}

// do sends the operation.
func do(ctx context.Context, rc dynamic.ResourceInterface, q Request, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var subs []string
	if q.Subresource != "" {
		subs = []string{q.Subresource}
	}
	var dry []string
	if q.DryRun {
		dry = []string{metav1.DryRunAll}
	}
	switch q.Operation {
	case Update:
		if q.Patch != nil {
			opts := metav1.PatchOptions{}
			if err := decodeOptions(q.Options, &opts); err != nil {
				return nil, err
			}
			opts.DryRun = dry
			return rc.Patch(ctx, obj.GetName(), q.PatchType, q.Patch, opts, subs...)
		}
		opts := metav1.UpdateOptions{}
		if err := decodeOptions(q.Options, &opts); err != nil {
			return nil, err
		}
		opts.DryRun = dry
		return rc.Update(ctx, obj, opts, subs...)
	case Delete:
		opts := metav1.DeleteOptions{}
		if err := decodeOptions(q.Options, &opts); err != nil {
			return nil, err
		}
		opts.DryRun = dry
		return nil, rc.Delete(ctx, obj.GetName(), opts, subs...)
	}
	opts := metav1.CreateOptions{}
	if err := decodeOptions(q.Options, &opts); err != nil {
		return nil, err
	}
	opts.DryRun = dry
	return rc.Create(ctx, obj, opts, subs...)
}

func decodeOptions(m map[string]any, into any) error {
	if len(m) == 0 {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, into); err != nil {
		return &ConfigError{Err: fmt.Errorf("the request's options: %w", err)}
	}
	return nil
}

// requestConfig is the administrator, or q's impersonator, impersonating
// q's user (when set), sending the audit ID and collecting warnings.
func (in *instance) requestConfig(q Request, auditID string, w rest.WarningHandler) *rest.Config {
	c := rest.CopyConfig(in.admin)
	c.WarningHandler = w
	if q.Impersonator != nil {
		c.CertData, c.KeyData, c.BearerToken = nil, nil, in.impersonatorToken
	}
	if u := q.User; u.Name != "" {
		c.Impersonate = rest.ImpersonationConfig{UserName: u.Name, UID: u.UID, Groups: impersonatedGroups(u), Extra: u.Extra}
	}
	headers := map[string]string{"Audit-ID": auditID}
	if q.DryRun {
		headers[traceHeader] = "verbose"
	}
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return headerRoundTripper{next: rt, headers: headers} })
	return c
}

// traceHeader is apiserver.TraceHeader: a verbose trace of a dry run.
const traceHeader = "X-Admitd-Trace"

type headerRoundTripper struct {
	next    http.RoundTripper
	headers map[string]string
}

func (h headerRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.next.RoundTrip(r)
}

// warningCollector keeps the Warning headers of the responses.
type warningCollector struct {
	mu       sync.Mutex
	warnings []string
}

func (w *warningCollector) HandleWarningHeader(code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	w.mu.Lock()
	w.warnings = append(w.warnings, text)
	w.mu.Unlock()
}

func (w *warningCollector) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string{}, w.warnings...)
}
