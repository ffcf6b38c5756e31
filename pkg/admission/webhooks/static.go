package webhooks

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// staticSuffix ends the name of every configuration loaded from a static
// manifest directory.
const staticSuffix = ".static.k8s.io"

// manifestSet is the result of reading a static manifest directory.
type manifestSet struct {
	hash       string
	mutating   []*admissionregistrationv1.MutatingWebhookConfiguration
	validating []*admissionregistrationv1.ValidatingWebhookConfiguration
}

// manifestChecks are the server's own checks of a configuration: defaults
// and create-time API validation.
type manifestChecks struct {
	Default  func(obj runtime.Object)
	Validate func(obj runtime.Object) error
}

// loadManifests reads every .yaml, .yml and .json file of dir (sorted, not
// recursive) and returns the configurations of the plugin's kind.
func loadManifests(dir string, mutating bool, checks manifestChecks) (*manifestSet, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	set := &manifestSet{}
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
		if err := set.addFile(e.Name(), data, mutating, checks, seen); err != nil {
			return nil, fmt.Errorf("error loading %s: %w", e.Name(), err)
		}
	}
	if hashed {
		set.hash = "sha256:" + hex.EncodeToString(h.Sum(nil))
	}
	sort.SliceStable(set.mutating, func(i, j int) bool { return set.mutating[i].Name < set.mutating[j].Name })
	sort.SliceStable(set.validating, func(i, j int) bool { return set.validating[i].Name < set.validating[j].Name })
	return set, nil
}

func (s *manifestSet) addFile(file string, data []byte, mutating bool, checks manifestChecks, seen map[string]string) error {
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
		if err := s.addDocument(file, doc, mutating, checks, seen); err != nil {
			return err
		}
	}
}

func (s *manifestSet) addDocument(file string, doc []byte, mutating bool, checks manifestChecks, seen map[string]string) error {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	var tm struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(j, &tm); err != nil {
		return err
	}
	want := "ValidatingWebhookConfiguration"
	if mutating {
		want = "MutatingWebhookConfiguration"
	}
	switch {
	case tm.APIVersion == "v1" && tm.Kind == "List", tm.APIVersion == admissionregistrationv1.SchemeGroupVersion.String() && tm.Kind == want+"List":
		for _, item := range tm.Items {
			if err := s.addDocument(file, item, mutating, checks, seen); err != nil {
				return err
			}
		}
		return nil
	case tm.APIVersion != admissionregistrationv1.SchemeGroupVersion.String() || tm.Kind != want:
		return fmt.Errorf("unsupported resource type %s %s", tm.APIVersion, tm.Kind)
	}
	return s.addConfiguration(file, j, mutating, checks, seen)
}

func (s *manifestSet) addConfiguration(file string, data []byte, mutating bool, checks manifestChecks, seen map[string]string) error {
	var obj runtime.Object
	var name string
	var hooks []hookEndpoint
	if mutating {
		c := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := decodeStrict(data, c); err != nil {
			return err
		}
		obj, name = c, c.Name
		for _, w := range c.Webhooks {
			hooks = append(hooks, hookEndpoint{w.Name, w.ClientConfig})
		}
	} else {
		c := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := decodeStrict(data, c); err != nil {
			return err
		}
		obj, name = c, c.Name
		for _, w := range c.Webhooks {
			hooks = append(hooks, hookEndpoint{w.Name, w.ClientConfig})
		}
	}
	if err := checkManifestName(file, name, seen); err != nil {
		return err
	}
	for _, h := range hooks {
		if err := h.check(name, file); err != nil {
			return err
		}
	}
	if checks.Default != nil {
		checks.Default(obj)
	}
	if checks.Validate != nil {
		if err := checks.Validate(obj); err != nil {
			return fmt.Errorf("%s %q: %w", obj.GetObjectKind().GroupVersionKind().Kind, name, err)
		}
	}
	if c, ok := obj.(*admissionregistrationv1.MutatingWebhookConfiguration); ok {
		s.mutating = append(s.mutating, c)
	} else {
		s.validating = append(s.validating, obj.(*admissionregistrationv1.ValidatingWebhookConfiguration))
	}
	return nil
}

func decodeStrict(data []byte, into runtime.Object) error {
	strict, err := sigsjson.UnmarshalStrict(data, into, sigsjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

func checkManifestName(file, name string, seen map[string]string) error {
	switch {
	case name == "":
		return fmt.Errorf("resource in file %q must have a name", file)
	case !strings.HasSuffix(name, staticSuffix):
		return fmt.Errorf("%q in file %q must have a name ending with %q", name, file, staticSuffix)
	}
	if prev, dup := seen[name]; dup {
		return fmt.Errorf("duplicate name %q found in file %q (previously seen in %q)", name, file, prev)
	}
	seen[name] = file
	return nil
}

// hookEndpoint is what the manifest checks need of a webhook.
type hookEndpoint struct {
	name string
	cc   admissionregistrationv1.WebhookClientConfig
}

func (h hookEndpoint) check(config, file string) error {
	if h.cc.Service != nil {
		return fmt.Errorf("webhook %q in %q (file %q): clientConfig.service is not supported for static manifests; use clientConfig.url instead", h.name, config, file)
	}
	if h.cc.URL == nil || *h.cc.URL == "" {
		return fmt.Errorf("webhook %q in %q (file %q): clientConfig.url is required for static manifests", h.name, config, file)
	}
	return nil
}
