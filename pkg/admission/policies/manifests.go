package policies

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/pkg/admission/internal/manifest"
)

// staticSuffix ends the name of every policy and binding of a static
// manifest directory (and no API object's).
const staticSuffix = manifest.Suffix

// manifestSet is the content of a static manifest directory: the policies
// and bindings of one plugin's kind, sorted by name.
type manifestSet struct {
	hash string
	snap *Snapshot
}

// manifestLoader reads a directory for one plugin.
type manifestLoader struct {
	mutating bool
	// defaultObj and validate are the API's defaulting and create-time
	// validation; nil skips them.
	defaultObj func(runtime.Object)
	validate   func(runtime.Object) error
}

// load reads the policies and bindings of the plugin's kinds from dir.
func (l manifestLoader) load(dir string) (*manifestSet, error) {
	docs, hash, err := manifest.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	set := &manifestSet{hash: hash, snap: &Snapshot{}}
	names := manifest.Names{}
	policyKind, bindingKind := l.kinds()
	for _, d := range docs {
		if d.APIVersion != admissionregistrationv1.SchemeGroupVersion.String() || (d.Kind != policyKind && d.Kind != bindingKind) {
			return nil, manifest.UnsupportedType(d)
		}
		if err := l.addObject(set.snap, d.File, d.Kind, d.JSON, names); err != nil {
			return nil, fmt.Errorf("error loading %s: %w", d.File, err)
		}
	}
	if err := checkBindingTargets(set.snap); err != nil {
		return nil, err
	}
	sortSnapshot(set.snap)
	return set, nil
}

// kinds returns the policy and binding kinds of the loader's plugin.
func (l manifestLoader) kinds() (policy, binding string) {
	if l.mutating {
		return "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"
	}
	return "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"
}

// addObject decodes, checks, defaults and validates one policy or binding.
func (l manifestLoader) addObject(snap *Snapshot, file, kind string, doc []byte, names manifest.Names) error {
	obj, err := newManifestObject(kind)
	if err != nil {
		return err
	}
	if err := manifest.DecodeStrict(doc, obj); err != nil {
		return err
	}
	name := obj.(interface{ GetName() string }).GetName()
	if err := names.Check(file, kind, name); err != nil {
		return err
	}
	if err := staticOnly(kind, obj); err != nil {
		return err
	}
	if l.defaultObj != nil {
		l.defaultObj(obj)
	}
	if l.validate != nil {
		if err := l.validate(obj); err != nil {
			return fmt.Errorf("%s %q: %w", kind, name, err)
		}
	}
	snap.Add(obj)
	return nil
}

func newManifestObject(kind string) (runtime.Object, error) {
	switch kind {
	case "ValidatingAdmissionPolicy":
		return &admissionregistrationv1.ValidatingAdmissionPolicy{}, nil
	case "ValidatingAdmissionPolicyBinding":
		return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}, nil
	case "MutatingAdmissionPolicy":
		return &admissionregistrationv1.MutatingAdmissionPolicy{}, nil
	case "MutatingAdmissionPolicyBinding":
		return &admissionregistrationv1.MutatingAdmissionPolicyBinding{}, nil
	}
	return nil, fmt.Errorf("unsupported resource type %s", kind)
}

// staticOnly enforces what only static manifests forbid: params.
func staticOnly(kind string, obj runtime.Object) error {
	var name, policyName string
	var paramKind, paramRef bool
	switch o := obj.(type) {
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		name, paramKind = o.Name, o.Spec.ParamKind != nil
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		name, paramKind = o.Name, o.Spec.ParamKind != nil
	case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
		name, policyName, paramRef = o.Name, o.Spec.PolicyName, o.Spec.ParamRef != nil
	case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
		name, policyName, paramRef = o.Name, o.Spec.PolicyName, o.Spec.ParamRef != nil
	}
	isBinding := strings.HasSuffix(kind, "Binding")
	switch {
	case paramKind:
		return fmt.Errorf("%s %q: spec.paramKind is not supported for static manifests", kind, name)
	case isBinding && policyName == "":
		return fmt.Errorf("binding %q must reference a policy (spec.policyName)", name)
	case isBinding && !strings.HasSuffix(policyName, staticSuffix):
		return fmt.Errorf("binding %q: spec.policyName %q must end with %q", name, policyName, staticSuffix)
	case paramRef:
		return fmt.Errorf("binding %q: spec.paramRef is not supported for static manifests", name)
	}
	return nil
}

// checkBindingTargets requires every binding to name a policy of the
// directory.
func checkBindingTargets(snap *Snapshot) error {
	names := map[string]bool{}
	for _, p := range snap.ValidatingPolicies {
		names[p.Name] = true
	}
	for _, p := range snap.MutatingPolicies {
		names[p.Name] = true
	}
	check := func(binding, policy string) error {
		if !names[policy] {
			return fmt.Errorf("binding %q references policy %q which does not exist in the manifest directory", binding, policy)
		}
		return nil
	}
	for _, b := range snap.ValidatingBindings {
		if err := check(b.Name, b.Spec.PolicyName); err != nil {
			return err
		}
	}
	for _, b := range snap.MutatingBindings {
		if err := check(b.Name, b.Spec.PolicyName); err != nil {
			return err
		}
	}
	return nil
}

func sortSnapshot(s *Snapshot) {
	sort.SliceStable(s.ValidatingPolicies, func(i, j int) bool { return s.ValidatingPolicies[i].Name < s.ValidatingPolicies[j].Name })
	sort.SliceStable(s.ValidatingBindings, func(i, j int) bool { return s.ValidatingBindings[i].Name < s.ValidatingBindings[j].Name })
	sort.SliceStable(s.MutatingPolicies, func(i, j int) bool { return s.MutatingPolicies[i].Name < s.MutatingPolicies[j].Name })
	sort.SliceStable(s.MutatingBindings, func(i, j int) bool { return s.MutatingBindings[i].Name < s.MutatingBindings[j].Name })
}

// staticManifests keeps a plugin's static manifests, reloaded when the
// directory changes.
type staticManifests = manifest.Reloader[*manifestSet]

func newStaticManifests(dir string, loader manifestLoader, log *slog.Logger, observe func(error)) (*staticManifests, error) {
	load := func() (manifest.Loaded[*manifestSet], error) {
		set, err := loader.load(dir)
		if err != nil {
			return manifest.Loaded[*manifestSet]{}, err
		}
		return manifest.Loaded[*manifestSet]{Hash: set.hash, Value: set}, nil
	}
	r, err := manifest.NewReloader(load, log, "policies in "+dir, observe)
	if err != nil {
		return nil, fmt.Errorf("failed to load static policy manifests from %q: %w", dir, err)
	}
	return r, nil
}
