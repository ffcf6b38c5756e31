package evaluate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// connectTargets are the resource and subresource each connect options
// kind (group "", version v1) goes to.
var connectTargets = map[string]struct{ resource, subresource string }{
	"PodExecOptions":        {"pods", "exec"},
	"PodAttachOptions":      {"pods", "attach"},
	"PodPortForwardOptions": {"pods", "portforward"},
	"PodProxyOptions":       {"pods", "proxy"},
	"NodeProxyOptions":      {"nodes", "proxy"},
	"ServiceProxyOptions":   {"services", "proxy"},
}

var connectSubresources = map[string]bool{"exec": true, "attach": true, "portforward": true, "proxy": true}

// checkConnect checks a CONNECT and settles its resource and
// subresource: q.Resource and q.Subresource, else those of the options
// kind.
func checkConnect(q *Request) error {
	switch {
	case q.Object == nil:
		return &ConfigError{Err: errors.New("the CONNECT has no options object (a PodExecOptions, for example)")}
	case q.Name == "":
		return &ConfigError{Err: errors.New("the CONNECT needs the name of the object connected to (--name, or the AdmissionReview's name)")}
	case q.OldObject != nil:
		return &ConfigError{Err: errors.New("a CONNECT has no old object: give the object connected to with the other objects")}
	case q.DryRun || len(q.Options) > 0:
		return &ConfigError{Err: errors.New("a CONNECT has no dry run and no options but its options object")}
	}
	gvk := q.Object.GroupVersionKind()
	if t, ok := connectTargets[gvk.Kind]; ok && gvk.Group == "" && gvk.Version == "v1" {
		if q.Resource == nil {
			q.Resource = &schema.GroupVersionResource{Version: "v1", Resource: t.resource}
		}
		if q.Subresource == "" {
			q.Subresource = t.subresource
		}
	}
	if q.Resource == nil {
		return &ConfigError{Err: fmt.Errorf("a CONNECT with a %s options object needs the resource (an AdmissionReview's)", gvk.Kind)}
	}
	if !connectSubresources[q.Subresource] {
		return &ConfigError{Err: fmt.Errorf("a CONNECT goes to the subresource exec, attach, portforward or proxy, not %q", q.Subresource)}
	}
	return checkImpersonator(q.Impersonator)
}

// connect sends the CONNECT q as the harness and kubectl do: a POST to the
// subresource, the options object's fields as its query. Admission runs
// before the server looks at the object connected to, and eval never
// upgrades the connection: an admitted CONNECT is answered by an error of
// the step after admission.
func (c *cluster) connect(ctx context.Context, in *instance, q Request) (*sent, error) {
	path, err := c.connectPath(q)
	if err != nil {
		return nil, &ConfigError{Err: fmt.Errorf("the request: %w", err)}
	}
	query, err := connectQuery(q.Object.Object)
	if err != nil {
		return nil, &ConfigError{Err: fmt.Errorf("the CONNECT's options: %w", err)}
	}
	out := &sent{auditID: uuid.NewString()}
	warnings := &warningCollector{}
	cfg := in.requestConfig(q, out.auditID, warnings)
	cfg.APIPath, cfg.GroupVersion = "/api", &schema.GroupVersion{Version: "v1"}
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	req := rc.Post().AbsPath(path)
	for k, vs := range query {
		for _, v := range vs {
			req = req.Param(k, v)
		}
	}
	reqErr := req.Do(ctx).Error()
	out.warnings = warnings.list()
	var status apierrors.APIStatus
	switch {
	case reqErr == nil:
	case errors.As(reqErr, &status):
		st := status.Status()
		out.status = &st
	default:
		return nil, fmt.Errorf("sending the request: %w", reqErr)
	}
	return out, nil
}

// connectPath is the URL path of q: the namespace (q.Namespace, else
// "default") for namespaced resources.
func (c *cluster) connectPath(q Request) (string, error) {
	gvr := *q.Resource
	kind, err := c.mapper.KindFor(gvr)
	if err != nil {
		return "", fmt.Errorf("the server does not serve %s", gvr)
	}
	m, err := c.mapper.RESTMapping(kind.GroupKind(), kind.Version)
	if err != nil {
		return "", fmt.Errorf("the server does not serve %s", gvr)
	}
	p := "/api/" + gvr.Version
	if gvr.Group != "" {
		p = "/apis/" + gvr.Group + "/" + gvr.Version
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := q.Namespace
		if ns == "" {
			ns = "default"
		}
		p += "/namespaces/" + url.PathEscape(ns)
	}
	return p + "/" + gvr.Resource + "/" + url.PathEscape(q.Name) + "/" + q.Subresource, nil
}

// connectQuery is the query of an options object: each field but
// apiVersion and kind, a list as one parameter per item.
func connectQuery(opts map[string]any) (url.Values, error) {
	out := url.Values{}
	for k, v := range opts {
		if k == "apiVersion" || k == "kind" || v == nil {
			continue
		}
		items, isList := v.([]any)
		if !isList {
			items = []any{v}
		}
		for _, item := range items {
			s, err := paramValue(item)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out.Add(k, s)
		}
	}
	return out, nil
}

func paramValue(v any) (string, error) {
	switch t := v.(type) {
	case string:
		return t, nil
	case bool:
		return strconv.FormatBool(t), nil
	case int64:
		return strconv.FormatInt(t, 10), nil
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<53 {
			return strconv.FormatInt(int64(t), 10), nil
		}
		return strconv.FormatFloat(t, 'g', -1, 64), nil
	}
	return "", fmt.Errorf("a %T is not a query parameter (values and lists of values are)", v)
}
