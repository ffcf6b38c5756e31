package explain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/admitd/admitd/pkg/admission/trace"
)

type httpRoundTripper = http.RoundTripper

// headerRoundTripper adds fixed headers to every request.
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

// loadConfig reads the kubeconfig as kubectl does and returns the client
// configuration and the context's namespace.
func loadConfig(o Options) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.Context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("loading the kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", err
	}
	cfg.UserAgent = "admitd-explain"
	return cfg, ns, nil
}

// checkAdmitd makes sure the server keeps admission traces: its /version
// names admitd, or else its trace endpoint exists.
func checkAdmitd(ctx context.Context, cfg *rest.Config) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return fmt.Errorf("reaching the server at %s: %w", cfg.Host, err)
	}
	if strings.Contains(v.GitVersion, "admitd") {
		return nil
	}
	code, _, err := get(ctx, cfg, trace.Path+"?limit=1")
	if err != nil {
		return err
	}
	if code == http.StatusNotFound {
		return fmt.Errorf("the server at %s is not admitd (it reports version %s and serves no %s): %w", cfg.Host, v.GitVersion, trace.Path, ErrNotAdmitd)
	}
	return nil
}

// target is the object and where it goes.
type target struct {
	obj        *unstructured.Unstructured
	gvr        schema.GroupVersionResource
	namespaced bool
}

// resolve maps the object's kind to its resource through discovery and
// settles its namespace: -n, else the object's, else the kubeconfig's.
func resolve(cfg *rest.Config, obj *unstructured.Unstructured, nsFlag, defaultNS string) (*target, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil && len(groups) == 0 {
		return nil, fmt.Errorf("discovering the server's resources: %w", err)
	}
	gvk := obj.GroupVersionKind()
	m, err := restmapper.NewDiscoveryRESTMapper(groups).RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("the server does not serve %s: %w", gvk, err)
	}
	t := &target{obj: obj, gvr: m.Resource, namespaced: m.Scope.Name() == meta.RESTScopeNameNamespace}
	if !t.namespaced {
		return t, nil
	}
	switch {
	case nsFlag != "":
		if objNS := obj.GetNamespace(); objNS != "" && objNS != nsFlag {
			return nil, fmt.Errorf("the namespace of the object (%s) does not match -n %s", objNS, nsFlag)
		}
		obj.SetNamespace(nsFlag)
	case obj.GetNamespace() == "":
		obj.SetNamespace(defaultNS)
	}
	return t, nil
}

// dryRun sends the operation as a dry run; an UPDATE of an object without
// a resourceVersion updates the stored one.
func dryRun(ctx context.Context, cfg *rest.Config, t *target, op string) error {
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var ri dynamic.ResourceInterface = dc.Resource(t.gvr)
	if t.namespaced {
		ri = dc.Resource(t.gvr).Namespace(t.obj.GetNamespace())
	}
	dry := []string{metav1.DryRunAll}
	switch op {
	case "UPDATE":
		if t.obj.GetResourceVersion() == "" {
			cur, err := ri.Get(ctx, t.obj.GetName(), metav1.GetOptions{})
			if err != nil {
				return err
			}
			t.obj.SetResourceVersion(cur.GetResourceVersion())
		}
		_, err = ri.Update(ctx, t.obj, metav1.UpdateOptions{DryRun: dry})
	case "DELETE":
		err = ri.Delete(ctx, t.obj.GetName(), metav1.DeleteOptions{DryRun: dry})
	default:
		_, err = ri.Create(ctx, t.obj, metav1.CreateOptions{DryRun: dry})
	}
	return err
}

// fetchTrace reads the trace of the audit ID, waiting briefly for the
// server to keep it (it does just after it answers).
func fetchTrace(ctx context.Context, cfg *rest.Config, auditID string) (*trace.Trace, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	t, err := trace.Fetch(ctx, hc, cfg.Host, auditID, 3*time.Second)
	var fe *trace.FetchError
	switch {
	case errors.As(err, &fe) && fe.Code == http.StatusForbidden:
		return nil, fmt.Errorf("you may not read admission traces (%s): a ClusterRole with\n%s\nbound to you grants it", statusMessage(fe.Body), trace.ClusterRoleRules)
	case errors.As(err, &fe):
		return nil, fmt.Errorf("reading the trace: %d %s", fe.Code, statusMessage(fe.Body))
	case err != nil:
		return nil, fmt.Errorf("reading the trace from %s: %w", cfg.Host, err)
	case t == nil:
		return nil, fmt.Errorf("the server kept no trace of the dry run (audit ID %s): admission may not have run, --admission-trace-buffer is 0, or newer traces have already pushed it out of the server's buffer (--admission-trace-buffer, --admission-trace-buffer-bytes)", auditID)
	}
	return t, nil
}

// get does a GET of path on the server with cfg's credentials (never
// impersonating).
func get(ctx context.Context, cfg *rest.Config, path string) (int, []byte, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+path, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("reaching the server at %s: %w", cfg.Host, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return resp.StatusCode, body, err
}

func statusMessage(body []byte) string {
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Message != "" {
		return st.Message
	}
	return strings.TrimSpace(string(body))
}
