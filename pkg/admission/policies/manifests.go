package policies

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// staticSuffix ends the name of every policy and binding of a static
// manifest directory (and no API object's).
const staticSuffix = ".static.k8s.io"

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

// load reads every non-empty .yaml, .yml and .json file directly in dir,
// in name order.
func (l manifestLoader) load(dir string) (*manifestSet, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	set := &manifestSet{snap: &Snapshot{}}
	h := sha256.New()
	hashed := false
	seen := map[string]string{}
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if e.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if len(data) == 0 {
			continue
		}
		h.Write(data)
		h.Write([]byte{0})
		hashed = true
		if err := l.addFile(set.snap, e.Name(), data, seen); err != nil {
			return nil, fmt.Errorf("error loading %s: %w", e.Name(), err)
		}
	}
	if hashed {
		set.hash = "sha256:" + hex.EncodeToString(h.Sum(nil))
	}
	if err := checkBindingTargets(set.snap); err != nil {
		return nil, err
	}
	sortSnapshot(set.snap)
	return set, nil
}

func (l manifestLoader) addFile(snap *Snapshot, file string, data []byte, seen map[string]string) error {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return err
		}
		if err := l.addDocument(snap, file, j, seen); err != nil {
			return err
		}
	}
}

// kinds returns the policy and binding kinds of the loader's plugin.
func (l manifestLoader) kinds() (policy, binding string) {
	if l.mutating {
		return "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"
	}
	return "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"
}

func (l manifestLoader) addDocument(snap *Snapshot, file string, doc []byte, seen map[string]string) error {
	var tm struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(doc, &tm); err != nil {
		return err
	}
	policyKind, bindingKind := l.kinds()
	group := admissionregistrationv1.SchemeGroupVersion.String()
	switch {
	case tm.APIVersion == "v1" && tm.Kind == "List",
		tm.APIVersion == group && (tm.Kind == policyKind+"List" || tm.Kind == bindingKind+"List"):
		for _, item := range tm.Items {
			if err := l.addDocument(snap, file, item, seen); err != nil {
				return err
			}
		}
		return nil
	case tm.APIVersion == group && (tm.Kind == policyKind || tm.Kind == bindingKind):
		return l.addObject(snap, file, tm.Kind, doc, seen)
	}
	return fmt.Errorf("unsupported resource type %s, Kind=%s", tm.APIVersion, tm.Kind)
}

// addObject decodes, checks, defaults and validates one policy or binding.
func (l manifestLoader) addObject(snap *Snapshot, file, kind string, doc []byte, seen map[string]string) error {
	obj, err := newManifestObject(kind)
	if err != nil {
		return err
	}
	if err := decodeStrict(doc, obj); err != nil {
		return err
	}
	name := obj.(interface{ GetName() string }).GetName()
	if err := checkManifestName(file, kind, name, seen); err != nil {
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
	addToSnapshot(snap, obj)
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

func decodeStrict(data []byte, into runtime.Object) error {
	strict, err := sigsjson.UnmarshalStrict(data, into, sigsjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// checkManifestName enforces a name with the static suffix, unique per
// kind across the directory.
func checkManifestName(file, kind, name string, seen map[string]string) error {
	switch {
	case name == "":
		return fmt.Errorf("resource in file %q must have a name", file)
	case !strings.HasSuffix(name, staticSuffix):
		return fmt.Errorf("%q in file %q must have a name ending with %q", name, file, staticSuffix)
	}
	key := kind + "/" + name
	if prev, dup := seen[key]; dup {
		return fmt.Errorf("duplicate name %q found in file %q (previously seen in %q)", name, file, prev)
	}
	seen[key] = file
	return nil
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

func addToSnapshot(snap *Snapshot, obj runtime.Object) {
	switch o := obj.(type) {
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		snap.ValidatingPolicies = append(snap.ValidatingPolicies, o)
	case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
		snap.ValidatingBindings = append(snap.ValidatingBindings, o)
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		snap.MutatingPolicies = append(snap.MutatingPolicies, o)
	case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
		snap.MutatingBindings = append(snap.MutatingBindings, o)
	}
}

func sortSnapshot(s *Snapshot) {
	sort.SliceStable(s.ValidatingPolicies, func(i, j int) bool { return s.ValidatingPolicies[i].Name < s.ValidatingPolicies[j].Name })
	sort.SliceStable(s.ValidatingBindings, func(i, j int) bool { return s.ValidatingBindings[i].Name < s.ValidatingBindings[j].Name })
	sort.SliceStable(s.MutatingPolicies, func(i, j int) bool { return s.MutatingPolicies[i].Name < s.MutatingPolicies[j].Name })
	sort.SliceStable(s.MutatingBindings, func(i, j int) bool { return s.MutatingBindings[i].Name < s.MutatingBindings[j].Name })
}

// manifestRecheck is how often the directory is read again for changes
// (upstream watches it and also polls every minute).
const manifestRecheck = 2 * time.Second

// staticManifests keeps a plugin's static manifests, reloading them in the
// background when a request finds them due. A load that fails keeps the
// previous set.
type staticManifests struct {
	dir    string
	loader manifestLoader
	log    *slog.Logger

	current atomic.Pointer[manifestSet]
	mu      sync.Mutex
	checked time.Time
	busy    bool
}

func newStaticManifests(dir string, loader manifestLoader, log *slog.Logger) (*staticManifests, error) {
	set, err := loader.load(dir)
	if err != nil {
		return nil, fmt.Errorf("failed to load static policy manifests from %q: %w", dir, err)
	}
	s := &staticManifests{dir: dir, loader: loader, log: log, checked: time.Now()}
	s.current.Store(set)
	return s, nil
}

// get returns the current set and starts a reload when one is due.
func (s *staticManifests) get() *manifestSet {
	s.mu.Lock()
	due := !s.busy && time.Since(s.checked) > manifestRecheck
	if due {
		s.busy, s.checked = true, time.Now()
	}
	s.mu.Unlock()
	if due {
		go s.reload()
	}
	return s.current.Load()
}

func (s *staticManifests) reload() {
	defer func() {
		s.mu.Lock()
		s.busy = false
		s.mu.Unlock()
	}()
	set, err := s.loader.load(s.dir)
	if err != nil {
		s.log.Error("reloading static policy manifests", "dir", s.dir, "err", err)
		return
	}
	if set.hash != s.current.Load().hash {
		s.current.Store(set)
		s.log.Info("reloaded static policy manifests", "dir", s.dir, "hash", set.hash)
	}
}
