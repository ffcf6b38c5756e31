// Package podsecurity is the PodSecurity admission plugin: it checks pods,
// and the pod templates of workload resources, against the Pod Security
// Standards level their namespace's pod-security.kubernetes.io labels ask
// for, refusing pods that violate the enforce level and warning about, or
// auditing, violations of the warn and audit levels; and it validates those
// labels on namespaces, warning about existing pods a stricter enforce level
// would refuse.
//
// The decisions, messages, warnings and audit annotations are those of
// k8s.io/pod-security-admission, the library kube-apiserver itself embeds:
// this package only wires it to admitd's attributes, namespace lookup, pod
// cache and metrics registerer, as kube-apiserver's
// plugin/pkg/admission/security/podsecurity does. It implements no check.
//
// Unlike kube-apiserver it knows no emulated version: "latest" always means
// the checks of 1.37. Namespaces come from the server's namespace lookup
// (consistent with this server's writes), so it needs neither an informer's
// ready wait nor a live read when the informer misses a namespace.
package podsecurity

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	psadmission "k8s.io/pod-security-admission/admission"
	psconfig "k8s.io/pod-security-admission/admission/api/load"
	psapi "k8s.io/pod-security-admission/api"
	psmetrics "k8s.io/pod-security-admission/metrics"
	pspolicy "k8s.io/pod-security-admission/policy"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/internal/boundedcache"
)

// Name is the upstream plugin name.
const Name = "PodSecurity"

// Options configure the plugin. The zero value records no metrics.
type Options struct {
	// Metrics receives pod_security_evaluations_total,
	// pod_security_exemptions_total and pod_security_errors_total, registered
	// when the plugin is first built. Nil: the plugin records no metrics.
	Metrics prometheus.Registerer
}

// Register adds the plugin to r. Its configuration (pc.Config) is a
// PodSecurityConfiguration of pod-security.admission.config.k8s.io v1,
// v1beta1 or v1alpha1; nil gives upstream's defaults (everything
// privileged, no exemptions).
func Register(r *admission.Registry, o Options) {
	m := &recorderOnce{reg: o.Metrics}
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		rec, err := m.get()
		if err != nil {
			return nil, err
		}
		return newPlugin(pc, rec)
	})
}

// Plugin is the PodSecurity plugin.
type Plugin struct {
	delegate *psadmission.Admission
	fast     fastPath
}

var _ admission.Validator = (*Plugin)(nil)

// newPlugin builds the plugin from pc: its configuration, its namespace lookup
// (pc.Namespaces, else pc.Cache) and the pod cache (pc.Cache) that namespace
// label updates check existing pods against (without a cache, they warn that
// the pods could not be listed). rec counts evaluations; nil
// counts nothing. Configuration errors are upstream's.
func newPlugin(pc admission.PluginContext, rec psmetrics.Recorder) (*Plugin, error) {
	cfg, err := psconfig.LoadFromReader(pc.Config)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		rec = noRecorder{}
	}
	ns, err := namespaceGetter(pc)
	if err != nil {
		return nil, err
	}
	evaluator, err := pspolicy.NewEvaluator(pspolicy.DefaultChecks(), nil)
	if err != nil {
		return nil, fmt.Errorf("could not create PodSecurityRegistry: %w", err)
	}
	d := &psadmission.Admission{
		Configuration:    cfg,
		Evaluator:        evaluator,
		Metrics:          rec,
		PodSpecExtractor: psadmission.DefaultPodSpecExtractor{},
		NamespaceGetter:  ns,
		PodLister:        podLister{cache: pc.Cache},
	}
	if err := d.CompleteConfiguration(); err != nil {
		return nil, fmt.Errorf("%s configuration error: %w", Name, err)
	}
	if err := d.ValidateConfiguration(); err != nil {
		return nil, fmt.Errorf("%s invalid: %w", Name, err)
	}
	return &Plugin{delegate: d, fast: fastPath{cfg: d, namespaces: ns, policies: boundedcache.Cache[string, *nsPolicy]{Max: maxCachedPolicies}}}, nil
}

// Handles CREATE and UPDATE.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// applicable are the resources the plugin looks at: namespaces, pods and
// the workload resources whose pod template the library extracts.
var applicable = map[schema.GroupResource]bool{
	corev1.Resource("namespaces"):             true,
	corev1.Resource("pods"):                   true,
	corev1.Resource("replicationcontrollers"): true,
	corev1.Resource("podtemplates"):           true,
	appsv1.Resource("replicasets"):            true,
	appsv1.Resource("deployments"):            true,
	appsv1.Resource("statefulsets"):           true,
	appsv1.Resource("daemonsets"):             true,
	batchv1.Resource("jobs"):                  true,
	batchv1.Resource("cronjobs"):              true,
}

// Validate evaluates the request with the library, then reports its
// warnings, its audit annotations (under the pod-security.kubernetes.io/
// prefix, in key order) and its refusal as kube-apiserver's wiring does.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if p.fast.admit(ctx, a) {
		return nil
	}
	return p.validateWithLibrary(ctx, a)
}

// validateWithLibrary is Validate without the fast path.
func (p *Plugin) validateWithLibrary(ctx context.Context, a *admission.Attributes) error {
	if !applicable[a.Resource.GroupResource()] {
		return nil
	}
	resp := p.delegate.Validate(ctx, attributes{a})
	if a.Record != nil {
		for _, w := range resp.Warnings {
			a.Record.AddWarning(w)
		}
		keys := make([]string, 0, len(resp.AuditAnnotations))
		for k := range resp.AuditAnnotations {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			// Keys are the library's constants: always valid.
			_ = a.Record.AddAnnotation(psapi.AuditAnnotationPrefix+k, resp.AuditAnnotations[k])
		}
	}
	if resp.Allowed {
		return nil
	}
	var se *apierrors.StatusError
	if !errors.As(admission.NewForbidden(a, errors.New("Not allowed by PodSecurity")), &se) {
		return apierrors.NewInternalError(errors.New("Not allowed by PodSecurity"))
	}
	if r := resp.Result; r != nil {
		if r.Message != "" {
			se.ErrStatus.Message = r.Message
		}
		if r.Reason != "" {
			se.ErrStatus.Reason = r.Reason
		}
		if r.Details != nil {
			se.ErrStatus.Details = r.Details
		}
		if r.Code != 0 {
			se.ErrStatus.Code = r.Code
		}
	}
	return se
}

// recorderOnce registers the metrics once per Register, however many times
// the plugin is built.
type recorderOnce struct {
	reg  prometheus.Registerer
	once sync.Once
	rec  psmetrics.Recorder
	err  error
}

func (m *recorderOnce) get() (psmetrics.Recorder, error) {
	m.once.Do(func() {
		if m.reg != nil {
			m.rec, m.err = newMetrics(m.reg)
		}
	})
	return m.rec, m.err
}
