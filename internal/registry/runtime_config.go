package registry

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// APIEnablement is which built-in group versions and resources are served:
// kube-apiserver 1.37's defaults with its --runtime-config applied
// (k8s.io/apiserver's server/resourceconfig over a storage.ResourceConfig).
// A resource is served when it is set on its own, else when its group
// version is on. A version admitd has no resources for serves nothing,
// as one upstream builds no storage for.
type APIEnablement struct {
	// versions holds every group version upstream's defaults name, on or
	// off; api/all, api/ga, api/beta and api/alpha switch only these.
	versions map[schema.GroupVersion]bool
	// resources are the resources set on their own
	// (<group>/<version>/<resource>=true|false).
	resources map[schema.GroupVersionResource]bool
}

// DefaultAPIEnablement is kube-apiserver 1.37's default: the GA versions on,
// the beta and alpha versions it can serve off.
func DefaultAPIEnablement() *APIEnablement {
	e := &APIEnablement{versions: map[schema.GroupVersion]bool{}, resources: map[schema.GroupVersionResource]bool{}}
	for _, gv := range upstreamDefaultOn {
		e.versions[schema.GroupVersion{Group: gv[0], Version: gv[1]}] = true
	}
	for _, gv := range upstreamDefaultOff {
		e.versions[schema.GroupVersion{Group: gv[0], Version: gv[1]}] = false
	}
	return e
}

// ResourceEnabled reports whether gvr is served: as set on its own, else
// as its group version.
func (e *APIEnablement) ResourceEnabled(gvr schema.GroupVersionResource) bool {
	if on, ok := e.resources[gvr]; ok {
		return on
	}
	return e.versions[gvr.GroupVersion()]
}

// VersionEnabled reports whether gv is on as a whole.
func (e *APIEnablement) VersionEnabled(gv schema.GroupVersion) bool { return e.versions[gv] }

// The keys that switch versions by their maturity.
const (
	runtimeConfigAll   = "api/all"
	runtimeConfigGA    = "api/ga"
	runtimeConfigBeta  = "api/beta"
	runtimeConfigAlpha = "api/alpha"
)

var (
	gaVersion    = regexp.MustCompile(`^v\d+$`)
	betaVersion  = regexp.MustCompile(`^v\d+beta\d+$`)
	alphaVersion = regexp.MustCompile(`^v\d+alpha\d+$`)

	// maturityKeys are the keys above in the order they apply.
	maturityKeys    = []string{runtimeConfigAll, runtimeConfigGA, runtimeConfigBeta, runtimeConfigAlpha}
	maturityMatches = map[string]func(version string) bool{
		runtimeConfigAll:   func(string) bool { return true },
		runtimeConfigGA:    gaVersion.MatchString,
		runtimeConfigBeta:  betaVersion.MatchString,
		runtimeConfigAlpha: alphaVersion.MatchString,
	}
)

// ParseRuntimeConfigMap reads a --runtime-config value into key=value
// pairs as kube-apiserver's flag does: comma-separated, spaces around keys
// and values trimmed, a key without "=" has the empty value (true), a later
// key replaces an earlier one. Repeated flags add to m.
func ParseRuntimeConfigMap(m map[string]string, value string) {
	for _, item := range strings.Split(value, ",") {
		if item == "" {
			continue
		}
		key, val, _ := strings.Cut(item, "=")
		m[strings.TrimSpace(key)] = strings.TrimSpace(val)
	}
}

// RuntimeConfigOptions are the other flags --runtime-config is checked
// against.
type RuntimeConfigOptions struct {
	// PriorityAndFairness is --enable-priority-and-fairness: it needs
	// flowcontrol.apiserver.k8s.io/v1, so turning that off is refused.
	PriorityAndFairness bool
}

// NewAPIEnablement applies --runtime-config pairs (ParseRuntimeConfigMap)
// to the defaults, refusing what kube-apiserver 1.37 refuses, with its
// messages: a key that is no group/version[/resource], a group upstream
// does not know, a version its group does not have, a value that is no
// boolean, a resource not in lowercase, api/all=false alone, and
// flowcontrol.apiserver.k8s.io/v1 off under API Priority and Fairness.
// The pairs are not changed.
func NewAPIEnablement(pairs map[string]string, o RuntimeConfigOptions) (*APIEnablement, error) {
	pairs = completeRuntimeConfig(pairs)
	if errs := validateRuntimeConfig(pairs, o); len(errs) > 0 {
		return nil, joinLikeUpstream(errs)
	}
	e := DefaultAPIEnablement()
	for _, key := range maturityKeys {
		value, ok := pairs[key]
		if !ok {
			continue
		}
		if value != "true" && value != "false" {
			return nil, fmt.Errorf("invalid value %v=%v", key, value)
		}
		e.setMatching(maturityMatches[key], value == "true")
	}
	if err := e.applyKeys(pairs); err != nil {
		return nil, err
	}
	return e, nil
}

// completeRuntimeConfig is kube-apiserver's completion of the flag: the
// core group's keys (v1, v1/..., api/v1, api/v1/...) become "/v1", their
// resource dropped, and api/legacy is ignored.
func completeRuntimeConfig(pairs map[string]string) map[string]string {
	out := make(map[string]string, len(pairs))
	for _, key := range sortedKeys(pairs) {
		value := pairs[key]
		switch {
		case key == "v1" || strings.HasPrefix(key, "v1/") || key == "api/v1" || strings.HasPrefix(key, "api/v1/"):
			out["/v1"] = value
		case key == "api/legacy":
		default:
			out[key] = value
		}
	}
	return out
}

// validateRuntimeConfig is kube-apiserver's check of the flag before the
// servers are built, its errors in upstream's order.
func validateRuntimeConfig(pairs map[string]string, o RuntimeConfigOptions) []error {
	var errs []error
	if o.PriorityAndFairness {
		errs = append(errs, priorityAndFairnessConflict(pairs)...)
	}
	if pairs[runtimeConfigAll] == "false" && len(pairs) == 1 {
		return append(errs, fmt.Errorf("invalid runtime-config with only %v=false", runtimeConfigAll))
	}
	var unknown []string
	for _, key := range sortedKeys(pairs) {
		if _, ok := maturityMatches[key]; ok {
			continue
		}
		gv, _, err := splitRuntimeConfigKey(key)
		if err != nil {
			return append(errs, fmt.Errorf("runtime-config invalid key %s", key))
		}
		if !upstreamKnowsGroup(gv.Group) && !contains(unknown, gv.String()) {
			unknown = append(unknown, gv.String())
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		errs = append(errs, fmt.Errorf("unknown api groups %s", strings.Join(unknown, ",")))
	}
	return errs
}

// priorityAndFairnessConflict refuses flowcontrol.apiserver.k8s.io/v1 off
// by the first of its keys (most specific first) the flag sets.
func priorityAndFairnessConflict(pairs map[string]string) []error {
	for _, key := range []string{"flowcontrol.apiserver.k8s.io/v1", runtimeConfigGA, runtimeConfigAll} {
		switch pairs[key] {
		case "false":
			return []error{fmt.Errorf("--runtime-config=%s=false conflicts with --enable-priority-and-fairness=true", key)}
		case "true":
			return nil
		}
	}
	return nil
}

// splitRuntimeConfigKey splits group/version[/resource]; resource is nil
// for a group/version key (and points at "" for "group/version/").
func splitRuntimeConfigKey(key string) (schema.GroupVersion, *string, error) {
	tokens := strings.Split(key, "/")
	if len(tokens) != 2 && len(tokens) != 3 {
		return schema.GroupVersion{}, nil, errors.New("not group/version[/resource]")
	}
	gv, err := schema.ParseGroupVersion(tokens[0] + "/" + tokens[1])
	if err != nil {
		return schema.GroupVersion{}, nil, err
	}
	if len(tokens) == 3 {
		return gv, &tokens[2], nil
	}
	return gv, nil, nil
}

// setMatching turns every version of the defaults whose name matches on or
// off, forgetting what was set on their resources.
func (e *APIEnablement) setMatching(match func(string) bool, on bool) {
	for gv := range e.versions {
		if match(gv.Version) {
			e.setVersion(gv, on)
		}
	}
}

func (e *APIEnablement) setVersion(gv schema.GroupVersion, on bool) {
	e.versions[gv] = on
	for gvr := range e.resources {
		if gvr.GroupVersion() == gv {
			delete(e.resources, gvr)
		}
	}
}

// applyKeys applies the group/version keys, then the
// group/version/resource keys (which win).
func (e *APIEnablement) applyKeys(pairs map[string]string) error {
	versions := map[schema.GroupVersion]bool{}
	resources := map[schema.GroupVersionResource]bool{}
	for _, key := range sortedKeys(pairs) {
		if _, ok := maturityMatches[key]; ok {
			continue
		}
		gv, resource, err := splitRuntimeConfigKey(key)
		if err != nil {
			return fmt.Errorf("invalid key %s", key)
		}
		if !upstreamKnowsGroup(gv.Group) {
			continue
		}
		if !upstreamKnowsVersion(gv) {
			return fmt.Errorf("group version %s that has not been registered", gv.String())
		}
		on, err := runtimeConfigBool(key, pairs[key])
		if err != nil {
			return err
		}
		if resource == nil {
			versions[gv] = on
			continue
		}
		if strings.ToLower(*resource) != *resource {
			return fmt.Errorf("invalid key %v: group/version/resource and resource is always lowercase plural, not %q", key, *resource)
		}
		resources[gv.WithResource(*resource)] = on
	}
	for gv, on := range versions {
		e.setVersion(gv, on)
	}
	for gvr, on := range resources {
		e.resources[gvr] = on
	}
	return nil
}

// runtimeConfigBool reads a group/version[/resource] key's value: empty is
// true, else strconv.ParseBool's.
func runtimeConfigBool(key, value string) (bool, error) {
	if value == "" {
		return true, nil
	}
	on, err := strconv.ParseBool(value)
	if err != nil {
		return false, fmt.Errorf("invalid value of %s: %s, err: %v", key, value, err)
	}
	return on, nil
}

// joinLikeUpstream is one error as itself, several as upstream's aggregate
// prints them ("[a, b]").
func joinLikeUpstream(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	texts := make([]string, len(errs))
	for i, err := range errs {
		texts[i] = err.Error()
	}
	return errors.New("[" + strings.Join(texts, ", ") + "]")
}

// upstreamKnowsGroup reports whether kube-apiserver's schemes have a
// version of group.
func upstreamKnowsGroup(group string) bool {
	for _, gv := range upstreamRegistered {
		if gv[0] == group {
			return true
		}
	}
	return false
}

// upstreamKnowsVersion reports whether kube-apiserver's schemes have gv.
func upstreamKnowsVersion(gv schema.GroupVersion) bool {
	for _, known := range upstreamRegistered {
		if known[0] == gv.Group && known[1] == gv.Version {
			return true
		}
	}
	return false
}

// Versions returns every group version the enablement names, on or off
// (the defaults' and those the flag named).
func (e *APIEnablement) Versions() map[schema.GroupVersion]bool {
	out := make(map[schema.GroupVersion]bool, len(e.versions))
	for gv, on := range e.versions {
		out[gv] = on
	}
	return out
}

// Resources returns the resources set on their own.
func (e *APIEnablement) Resources() map[schema.GroupVersionResource]bool {
	out := make(map[schema.GroupVersionResource]bool, len(e.resources))
	for gvr, on := range e.resources {
		out[gvr] = on
	}
	return out
}
