package resourcequota

import (
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Configuration is the plugin's configuration file: apiserver.config.k8s.io/v1
// ResourceQuotaConfiguration, or resourcequota.admission.k8s.io/v1beta1 or
// v1alpha1 Configuration.
type Configuration struct {
	metav1.TypeMeta `json:",inline"`
	// LimitedResources are resources that may only be consumed in a
	// namespace whose quota covers them.
	LimitedResources []LimitedResource `json:"limitedResources"`
}

// LimitedResource names a resource whose consumption needs a covering
// quota.
type LimitedResource struct {
	// APIGroup of the resource ("" for core).
	APIGroup string `json:"apiGroup,omitempty"`
	// Resource is the resource name (required).
	Resource string `json:"resource"`
	// MatchContains are substrings of the quota resource names (such as
	// "requests.cpu") an object must have a covering quota for when it
	// consumes them.
	MatchContains []string `json:"matchContains,omitempty"`
	// MatchScopes are the scopes an object that they select must have a
	// covering quota scope for.
	MatchScopes []corev1.ScopedResourceSelectorRequirement `json:"matchScopes,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (c *Configuration) DeepCopyObject() runtime.Object {
	out := &Configuration{TypeMeta: c.TypeMeta}
	for _, l := range c.LimitedResources {
		cp := LimitedResource{APIGroup: l.APIGroup, Resource: l.Resource, MatchContains: append([]string(nil), l.MatchContains...)}
		for _, s := range l.MatchScopes {
			cp.MatchScopes = append(cp.MatchScopes, *s.DeepCopy())
		}
		out.LimitedResources = append(out.LimitedResources, cp)
	}
	return out
}

// The kinds the configuration file may have.
var configKinds = []schema.GroupVersionKind{
	{Group: "apiserver.config.k8s.io", Version: "v1", Kind: "ResourceQuotaConfiguration"},
	{Group: "resourcequota.admission.k8s.io", Version: "v1beta1", Kind: "Configuration"},
	{Group: "resourcequota.admission.k8s.io", Version: "v1alpha1", Kind: "Configuration"},
}

var configCodecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	for _, k := range configKinds {
		s.AddKnownTypeWithName(k, &Configuration{})
	}
	return serializer.NewCodecFactory(s, serializer.EnableStrict)
}()

// LoadConfiguration reads the configuration (YAML or JSON, strict: unknown
// and duplicate fields are errors); nil gives the empty configuration.
func LoadConfiguration(r io.Reader) (*Configuration, error) {
	if r == nil {
		return &Configuration{}, nil
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	obj, _, err := configCodecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		return nil, err
	}
	c, ok := obj.(*Configuration)
	if !ok {
		return nil, fmt.Errorf("unexpected type: %T", obj)
	}
	return c, nil
}

// Validate returns upstream's errors for c: every limited resource names
// its resource.
func Validate(c *Configuration) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("limitedResources")
	for i, l := range c.LimitedResources {
		if l.Resource == "" {
			errs = append(errs, field.Required(p.Index(i).Child("resource"), ""))
		}
	}
	return errs
}
