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
	"github.com/admitd/admitd/pkg/admission/plugins/alwaysadmit"
	"github.com/admitd/admitd/pkg/admission/plugins/alwaysdeny"
	"github.com/admitd/admitd/pkg/admission/plugins/alwayspullimages"
	"github.com/admitd/admitd/pkg/admission/plugins/certificateapproval"
	"github.com/admitd/admitd/pkg/admission/plugins/certificatesigning"
	"github.com/admitd/admitd/pkg/admission/plugins/certificatesubjectrestriction"
	"github.com/admitd/admitd/pkg/admission/plugins/clustertrustbundleattest"
	"github.com/admitd/admitd/pkg/admission/plugins/defaultingressclass"
	"github.com/admitd/admitd/pkg/admission/plugins/defaultstorageclass"
	"github.com/admitd/admitd/pkg/admission/plugins/defaulttolerationseconds"
	"github.com/admitd/admitd/pkg/admission/plugins/denyserviceexternalips"
	"github.com/admitd/admitd/pkg/admission/plugins/eventratelimit"
	"github.com/admitd/admitd/pkg/admission/plugins/extendedresourcetoleration"
	"github.com/admitd/admitd/pkg/admission/plugins/imagepolicywebhook"
	"github.com/admitd/admitd/pkg/admission/plugins/limitpodhardantiaffinitytopology"
	"github.com/admitd/admitd/pkg/admission/plugins/limitranger"
	"github.com/admitd/admitd/pkg/admission/plugins/namespaceautoprovision"
	"github.com/admitd/admitd/pkg/admission/plugins/namespaceexists"
	"github.com/admitd/admitd/pkg/admission/plugins/namespacelifecycle"
	"github.com/admitd/admitd/pkg/admission/plugins/nodedeclaredfeaturevalidator"
	"github.com/admitd/admitd/pkg/admission/plugins/noderestriction"
	"github.com/admitd/admitd/pkg/admission/plugins/ownerreferencespermissionenforcement"
	"github.com/admitd/admitd/pkg/admission/plugins/persistentvolumeclaimresize"
	"github.com/admitd/admitd/pkg/admission/plugins/podgroupprotection"
	"github.com/admitd/admitd/pkg/admission/plugins/podnodeselector"
	"github.com/admitd/admitd/pkg/admission/plugins/podresizevalidator"
	"github.com/admitd/admitd/pkg/admission/plugins/podsecurity"
	"github.com/admitd/admitd/pkg/admission/plugins/podtolerationrestriction"
	"github.com/admitd/admitd/pkg/admission/plugins/podtopologylabels"
	"github.com/admitd/admitd/pkg/admission/plugins/priority"
	"github.com/admitd/admitd/pkg/admission/plugins/resourcequota"
	"github.com/admitd/admitd/pkg/admission/plugins/runtimeclass"
	"github.com/admitd/admitd/pkg/admission/plugins/serviceaccount"
	"github.com/admitd/admitd/pkg/admission/plugins/storageobjectinuseprotection"
	"github.com/admitd/admitd/pkg/admission/plugins/taintnodesbycondition"
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
	// DefaultTolerationSeconds configures DefaultTolerationSeconds (its
	// two flags); the zero value is upstream's 300 seconds each.
	DefaultTolerationSeconds defaulttolerationseconds.Options
	// PodSecurity configures PodSecurity (its metrics).
	PodSecurity podsecurity.Options
}

// Register registers every plugin admitd implements.
func Register(r *admission.Registry, o Options) {
	alwaysadmit.Register(r)
	alwaysdeny.Register(r)
	alwayspullimages.Register(r)
	imagepolicywebhook.Register(r)
	limitpodhardantiaffinitytopology.Register(r)
	limitranger.Register(r)
	namespaceautoprovision.Register(r)
	namespaceexists.Register(r)
	namespacelifecycle.Register(r)
	noderestriction.Register(r)
	taintnodesbycondition.Register(r)
	podnodeselector.Register(r)
	defaulttolerationseconds.Register(r, o.DefaultTolerationSeconds)
	podtolerationrestriction.Register(r)
	extendedresourcetoleration.Register(r)
	runtimeclass.Register(r)
	podsecurity.Register(r, o.PodSecurity)
	eventratelimit.Register(r)
	podgroupprotection.Register(r)
	podtopologylabels.Register(r)
	nodedeclaredfeaturevalidator.Register(r)
	podresizevalidator.Register(r)
	ownerreferencespermissionenforcement.Register(r)
	certificateapproval.Register(r)
	certificatesigning.Register(r)
	certificatesubjectrestriction.Register(r)
	clustertrustbundleattest.Register(r)
	serviceaccount.Register(r)
	priority.Register(r)
	defaultstorageclass.Register(r)
	storageobjectinuseprotection.Register(r)
	persistentvolumeclaimresize.Register(r)
	defaultingressclass.Register(r)
	denyserviceexternalips.Register(r)
	resourcequota.Register(r)
	policies.Register(r, o.Policies)
	webhooks.Register(r, o.Webhooks)
}

// NewRegistry returns a registry with every plugin.
func NewRegistry(o Options) *admission.Registry {
	r := admission.NewRegistry()
	Register(r, o)
	return r
}
