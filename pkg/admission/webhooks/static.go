package webhooks

import (
	"fmt"
	"sort"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/pkg/admission/internal/manifest"
)

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

// loadManifests reads the configurations of the plugin's kind from the
// static manifest directory dir.
func loadManifests(dir string, mutating bool, checks manifestChecks) (*manifestSet, error) {
	docs, hash, err := manifest.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	want := "ValidatingWebhookConfiguration"
	if mutating {
		want = "MutatingWebhookConfiguration"
	}
	set := &manifestSet{hash: hash}
	names := manifest.Names{}
	for _, d := range docs {
		if d.APIVersion != admissionregistrationv1.SchemeGroupVersion.String() || d.Kind != want {
			return nil, manifest.UnsupportedType(d)
		}
		if err := set.addConfiguration(d.File, d.JSON, mutating, checks, names); err != nil {
			return nil, fmt.Errorf("error loading %s: %w", d.File, err)
		}
	}
	sort.SliceStable(set.mutating, func(i, j int) bool { return set.mutating[i].Name < set.mutating[j].Name })
	sort.SliceStable(set.validating, func(i, j int) bool { return set.validating[i].Name < set.validating[j].Name })
	return set, nil
}

func (s *manifestSet) addConfiguration(file string, data []byte, mutating bool, checks manifestChecks, names manifest.Names) error {
	var obj runtime.Object
	var name string
	var hooks []hookEndpoint
	if mutating {
		c := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := manifest.DecodeStrict(data, c); err != nil {
			return err
		}
		obj, name = c, c.Name
		for _, w := range c.Webhooks {
			hooks = append(hooks, hookEndpoint{w.Name, w.ClientConfig})
		}
	} else {
		c := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := manifest.DecodeStrict(data, c); err != nil {
			return err
		}
		obj, name = c, c.Name
		for _, w := range c.Webhooks {
			hooks = append(hooks, hookEndpoint{w.Name, w.ClientConfig})
		}
	}
	if err := names.Check(file, "", name); err != nil {
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
