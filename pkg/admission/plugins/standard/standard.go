// Package standard is the one list of every admission plugin compiled into
// admitd, in kube-apiserver's order: the compiled-in plugins of
// pkg/admission/plugins and the dynamic ones (admission policies and
// webhooks). The server builds its registry here; a library user does the
// same and adds plugins of their own to the registry.
//
// It lists plugins; it does not choose which run (that is
// admission.Registry.Enabled) nor read any cluster state itself.
package standard

import (
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/defaultingressclass"
	"github.com/admitd/admitd/pkg/admission/plugins/defaultstorageclass"
	"github.com/admitd/admitd/pkg/admission/plugins/denyserviceexternalips"
	"github.com/admitd/admitd/pkg/admission/plugins/namespacelifecycle"
	"github.com/admitd/admitd/pkg/admission/plugins/noderestriction"
	"github.com/admitd/admitd/pkg/admission/plugins/persistentvolumeclaimresize"
	"github.com/admitd/admitd/pkg/admission/plugins/storageobjectinuseprotection"
	"github.com/admitd/admitd/pkg/admission/policies"
	"github.com/admitd/admitd/pkg/admission/webhooks"
)

// Options are what the dynamic plugins need; the zero value gives plugins
// that know no webhooks and no policies.
type Options struct {
	// Webhooks configures MutatingAdmissionWebhook and
	// ValidatingAdmissionWebhook.
	Webhooks webhooks.Options
	// Policies configures MutatingAdmissionPolicy and
	// ValidatingAdmissionPolicy.
	Policies policies.Options
}

// Register registers every plugin admitd implements.
func Register(r *admission.Registry, o Options) {
	namespacelifecycle.Register(r)
	noderestriction.Register(r)
	defaultstorageclass.Register(r)
	storageobjectinuseprotection.Register(r)
	persistentvolumeclaimresize.Register(r)
	defaultingressclass.Register(r)
	denyserviceexternalips.Register(r)
	policies.Register(r, o.Policies)
	webhooks.Register(r, o.Webhooks)
}

// NewRegistry returns a registry with every plugin.
func NewRegistry(o Options) *admission.Registry {
	r := admission.NewRegistry()
	Register(r, o)
	return r
}
