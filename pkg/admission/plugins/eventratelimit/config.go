package eventratelimit

import (
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/admitd/admitd/pkg/admission/plugins/eventratelimit/v1alpha1"
)

var codecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	s.AddKnownTypes(v1alpha1.GroupVersion, &v1alpha1.Configuration{})
	return serializer.NewCodecFactory(s)
}()

// LoadConfiguration reads a configuration (YAML or JSON) as upstream does:
// apiVersion and kind required, unknown fields ignored. A nil reader gives
// the empty configuration, which Validate refuses.
func LoadConfiguration(r io.Reader) (*v1alpha1.Configuration, error) {
	if r == nil {
		return &v1alpha1.Configuration{}, nil
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	obj, _, err := codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		return nil, err
	}
	c, ok := obj.(*v1alpha1.Configuration)
	if !ok {
		return nil, fmt.Errorf("unexpected type: %T", obj)
	}
	return c, nil
}

// Validate returns upstream's errors for c.
func Validate(c *v1alpha1.Configuration) field.ErrorList {
	var errs field.ErrorList
	limitsPath := field.NewPath("limits")
	if len(c.Limits) == 0 {
		errs = append(errs, field.Invalid(limitsPath, c.Limits, "must not be empty"))
	}
	allowed := make([]string, len(v1alpha1.LimitTypes))
	for i, t := range v1alpha1.LimitTypes {
		allowed[i] = string(t)
	}
	for i, l := range c.Limits {
		p := limitsPath.Index(i)
		known := false
		for _, t := range v1alpha1.LimitTypes {
			known = known || l.Type == t
		}
		if !known {
			errs = append(errs, field.NotSupported(p.Child("type"), l.Type, allowed))
		}
		if l.Burst <= 0 {
			errs = append(errs, field.Invalid(p.Child("burst"), l.Burst, "must be positive"))
		}
		if l.QPS <= 0 {
			errs = append(errs, field.Invalid(p.Child("qps"), l.QPS, "must be positive"))
		}
		if l.Type != v1alpha1.ServerLimitType && l.CacheSize < 0 {
			errs = append(errs, field.Invalid(p.Child("cacheSize"), l.CacheSize, "must not be negative"))
		}
	}
	return errs
}
