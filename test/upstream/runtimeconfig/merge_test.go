package runtimeconfig

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/server/resourceconfig"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/kubernetes/pkg/controlplane/apiserver/options"

	"github.com/admitd/admitd/internal/registry"
)

// enablement is what a --runtime-config value comes to: the group
// versions named (on or off) and the resources set on their own, or the
// error that stops kube-apiserver.
type enablement struct {
	Versions  map[schema.GroupVersion]bool
	Resources map[schema.GroupVersionResource]bool
	Err       string
}

// upstreamEnablement is kube-apiserver's handling of value: the flag's
// parsing (cliflag.ConfigurationMap), completion (Options.Complete's
// rewriting of the core group's keys, reproduced here: Complete needs a
// whole server's options), validation (Options.Validate's errors about
// the flag) and each server's MergeAPIResourceConfigs, joined.
func upstreamEnablement(value string) enablement {
	rc := cliflag.ConfigurationMap{}
	if err := rc.Set(value); err != nil {
		return enablement{Err: err.Error()}
	}
	for key, v := range rc {
		if key == "v1" || strings.HasPrefix(key, "v1/") || key == "api/v1" || strings.HasPrefix(key, "api/v1/") {
			delete(rc, key)
			rc["/v1"] = v
		}
		if key == "api/legacy" {
			delete(rc, key)
		}
	}
	o := options.NewOptions()
	o.APIEnablement.RuntimeConfig = rc
	var errs []error
	for _, err := range o.Validate() {
		if strings.Contains(err.Error(), "runtime-config") || strings.Contains(err.Error(), "unknown api groups") {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return enablement{Err: utilerrors.NewAggregate(errs).Error()}
	}
	out := enablement{Versions: map[schema.GroupVersion]bool{}, Resources: map[schema.GroupVersionResource]bool{}}
	for _, s := range servers {
		cfg, err := resourceconfig.MergeAPIResourceConfigs(s.defaults(), rc, s.registry)
		if err != nil {
			return enablement{Err: err.Error()}
		}
		for gv, on := range cfg.GroupVersionConfigs {
			out.Versions[gv] = on
		}
		for gvr, on := range cfg.ResourceConfigs {
			out.Resources[gvr] = on
		}
	}
	return out
}

func admitdEnablement(value string) enablement {
	pairs := map[string]string{}
	registry.ParseRuntimeConfigMap(pairs, value)
	e, err := registry.NewAPIEnablement(pairs, registry.RuntimeConfigOptions{PriorityAndFairness: true})
	if err != nil {
		return enablement{Err: err.Error()}
	}
	return enablement{Versions: e.Versions(), Resources: e.Resources()}
}

// fixedCases are flag values with at most one mistake each (upstream reads
// the pairs in map order, so of two mistakes either may be reported).
var fixedCases = []string{
	"", "api/all=true", "api/all=false", "api/all=false,v1=true", "api/all=false,api/v1=true", "api/beta=true",
	"api/alpha=true", "api/ga=false,v1=true", "api/ga=false", "api/beta=maybe", "api/all=TRUE", "api/all=",
	"apps/v1=maybe", "apps/v1=TRUE", "apps/v1=1", "apps/v1=f", "apps/v1=", "apps/v1", " apps/v1 = false ",
	"apps/v9=true", "foo.example.com/v1=true", "a/b/c/d=true", "apps=true", "Apps/v1=true", "/=true", "apps/=true",
	"admissionregistration.k8s.io/v1beta1=true", "admissionregistration.k8s.io/v1beta1",
	"admissionregistration.k8s.io/v1alpha1=true,admissionregistration.k8s.io/v1beta1=true",
	"admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies=true",
	"admissionregistration.k8s.io/v1beta1/MutatingAdmissionPolicies=true",
	"apps/v1/deployments=false", "api/all=true,apps/v1/deployments=false",
	"api/beta=true,admissionregistration.k8s.io/v1beta1=false",
	"api/beta=true,admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies=false",
	"admissionregistration.k8s.io/v1beta1=false,admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies=true",
	"flowcontrol.apiserver.k8s.io/v1=false", "api/ga=false,flowcontrol.apiserver.k8s.io/v1=true",
	"apps/v1beta1=true", "apps/v1beta2=true", "extensions/v1beta1=true", "node.k8s.io/v1alpha1=true",
	"apiextensions.k8s.io/v7=true", "apiextensions.k8s.io/v1beta1=false", "apiregistration.k8s.io/v1beta1=false",
	"apiregistration.k8s.io/v1beta9=true", "api/legacy=false", "v1/pods=false", "api/v1/pods=false,apps/v1=true",
	"resource.k8s.io/v1beta2=true", "resource.k8s.io/v1alpha3=true", "storagemigration.k8s.io/v1beta1=true",
	"certificates.k8s.io/v1beta1/clustertrustbundles=true", "coordination.k8s.io/v1alpha2=true",
	"internal.apiserver.k8s.io/v1alpha1=true", "imagepolicy.k8s.io/v1alpha1=true", "admission.k8s.io/v1=true",
	"apps/v1/deployments/scale=false", "apps/v1/=false", "a/b=true", "batch/v1beta1=true,batch/v1/cronjobs=false",
	",,apps/v1=false,,", "apps/v1=false,apps/v1=true", "api/alpha=true,api/beta=false,api/all=true",
}

func TestMergeMatchesUpstream(t *testing.T) {
	for _, value := range fixedCases {
		compare(t, value)
	}
}

// goodPairs are pairs upstream accepts, to combine at random.
var goodPairs = []string{
	"api/all=true", "api/all=false", "api/ga=true", "api/ga=false", "api/beta=true", "api/beta=false",
	"api/alpha=true", "api/alpha=false", "v1=true", "apps/v1=false", "apps/v1/deployments=true",
	"apps/v1/deployments=false", "admissionregistration.k8s.io/v1beta1=true", "admissionregistration.k8s.io/v1beta1=false",
	"admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies=true",
	"admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicybindings=false", "admissionregistration.k8s.io/v1alpha1",
	"certificates.k8s.io/v1beta1=true", "certificates.k8s.io/v1beta1/podcertificaterequests=false",
	"storagemigration.k8s.io/v1beta1=true", "resource.k8s.io/v1beta1=false", "resource.k8s.io/v1/deviceclasses=false",
	"autoscaling/v1=false", "batch/v1beta1=true", "apiextensions.k8s.io/v1beta1=false", "apiregistration.k8s.io/v1=true",
	"flowcontrol.apiserver.k8s.io/v1=true", "flowcontrol.apiserver.k8s.io/v1beta3=true", "api/legacy=true",
}

func TestRandomCombinationsMatchUpstream(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 3000; i++ {
		n := 1 + rng.Intn(5)
		parts := make([]string, n)
		for j := range parts {
			parts[j] = goodPairs[rng.Intn(len(goodPairs))]
		}
		compare(t, strings.Join(parts, ","))
	}
}

func compare(t *testing.T, value string) {
	t.Helper()
	up, got := upstreamEnablement(value), admitdEnablement(value)
	if diff := cmp.Diff(up, got); diff != "" {
		t.Errorf("--runtime-config=%q: admitd differs from upstream (-upstream +admitd):\n%s", value, diff)
	}
}

// TestParsingMatchesUpstream: the pairs read from a value are
// cliflag.ConfigurationMap's.
func TestParsingMatchesUpstream(t *testing.T) {
	for _, value := range append(fixedCases, "a=b=c", " x ", "=true", "a,,b=,c= d") {
		up := cliflag.ConfigurationMap{}
		_ = up.Set(value)
		got := map[string]string{}
		registry.ParseRuntimeConfigMap(got, value)
		if diff := cmp.Diff(map[string]string(up), got); diff != "" {
			t.Errorf("ParseRuntimeConfigMap(%q) differs (-upstream +admitd):\n%s", value, diff)
		}
	}
}
