// Package namespacelifecycle is the NamespaceLifecycle admission plugin: it
// refuses new content in namespaces that do not exist or are being
// terminated, and the deletion of the immortal system namespaces.
//
// It reads namespaces through the server's lookup: a cache that follows
// storage and reads storage itself for a namespace it lacks (so a create
// in a namespace made an instant ago is not refused; upstream sleeps 50 ms
// and then reads storage). As upstream, for 30 s after it admits a
// namespace's deletion it reads that namespace from storage whenever the
// cache still calls it Active, so another instance's lagging cache does
// not let new content into a namespace being terminated.
package namespacelifecycle

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilcache "k8s.io/apimachinery/pkg/util/cache"

	"github.com/admitd/admitd/pkg/admission"
)

// Name is the upstream plugin name.
const Name = "NamespaceLifecycle"

// immortal namespaces may never be deleted.
var immortal = map[string]bool{"default": true, "kube-system": true, "kube-public": true}

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		if pc.Namespaces == nil {
			return nil, fmt.Errorf("missing namespace lookup")
		}
		return New(pc.Namespaces), nil
	})
}

// recentDeletionTTL is how long an admitted namespace deletion makes the
// plugin distrust a cache that still shows the namespace Active;
// recentDeletionsKept bounds how many it remembers (upstream's 30 s, 100).
const (
	recentDeletionTTL   = 30 * time.Second
	recentDeletionsKept = 100
)

// Plugin is the NamespaceLifecycle plugin.
type Plugin struct {
	namespaces      admission.NamespaceLookup
	recentDeletions *utilcache.LRUExpireCache
	// deletionsUntil is when the last remembered deletion expires (Unix
	// nanoseconds): until then creates consult recentDeletions, after it
	// they skip its lock.
	deletionsUntil atomic.Int64
}

// New returns the plugin reading namespaces through namespaces.
func New(namespaces admission.NamespaceLookup) *Plugin {
	return &Plugin{namespaces: namespaces, recentDeletions: utilcache.NewLRUExpireCache(recentDeletionsKept)}
}

var _ admission.Mutator = (*Plugin)(nil)

// Handles CREATE, UPDATE and DELETE.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update || op == admission.Delete
}

func isNamespaceKind(a *admission.Attributes) bool {
	return a.Kind.Group == "" && a.Kind.Kind == "Namespace"
}

// Admit applies the namespace lifecycle rules.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.Operation == admission.Delete && isNamespaceKind(a) && immortal[a.Name] {
		return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, fmt.Errorf("this namespace may not be deleted"))
	}
	if a.Namespace == "" && !isNamespaceKind(a) {
		return nil
	}
	if isNamespaceKind(a) {
		if a.Operation == admission.Delete {
			p.recentDeletions.Add(a.Name, true, recentDeletionTTL)
			p.deletionsUntil.Store(time.Now().Add(recentDeletionTTL).UnixNano())
		}
		return nil
	}
	if a.Operation == admission.Delete || a.Operation == admission.Update {
		return nil
	}
	if a.Resource.Group == "authorization.k8s.io" && a.Resource.Resource == "localsubjectaccessreviews" {
		return nil
	}
	ns, err := p.namespace(ctx, a.Namespace)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return err
		}
		return apierrors.NewInternalError(err)
	}
	if a.Operation == admission.Create && ns.Status.Phase == corev1.NamespaceTerminating {
		return terminating(a)
	}
	return nil
}

// namespace returns the namespace from the lookup, or from storage when
// its deletion was admitted recently and the lookup still says Active.
func (p *Plugin) namespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	ns, err := p.namespaces.GetNamespace(ctx, name)
	if err != nil || ns.Status.Phase != corev1.NamespaceActive {
		return ns, err
	}
	live, ok := p.namespaces.(admission.LiveNamespaceLookup)
	if !ok {
		return ns, nil
	}
	if time.Now().UnixNano() > p.deletionsUntil.Load() {
		return ns, nil
	}
	if _, deleted := p.recentDeletions.Get(name); !deleted {
		return ns, nil
	}
	return live.GetNamespaceLive(ctx, name)
}

func terminating(a *admission.Attributes) error {
	err := admission.NewForbidden(a, fmt.Errorf("unable to create new content in namespace %s because it is being terminated", a.Namespace))
	if se, ok := err.(*apierrors.StatusError); ok {
		if se.ErrStatus.Details == nil {
			se.ErrStatus.Details = &metav1.StatusDetails{}
		}
		se.ErrStatus.Details.Causes = append(se.ErrStatus.Details.Causes, metav1.StatusCause{
			Type:    corev1.NamespaceTerminatingCause,
			Message: fmt.Sprintf("namespace %s is being terminated", a.Namespace),
			Field:   "metadata.namespace",
		})
	}
	return err
}
