package podtolerationrestriction

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// configGroupVersion is the group and version of the configuration file.
var configGroupVersion = schema.GroupVersion{Group: "podtolerationrestriction.admission.k8s.io", Version: "v1alpha1"}

// Configuration is podtolerationrestriction.admission.k8s.io/v1alpha1
// Configuration: the cluster-wide fallbacks of the two namespace
// annotations.
type Configuration struct {
	// Default tolerations of pods created in namespaces without the
	// defaultTolerations annotation.
	Default []corev1.Toleration `json:"default,omitempty"`
	// Whitelist of tolerations for namespaces without the
	// tolerationsWhitelist annotation; empty allows every toleration.
	Whitelist []corev1.Toleration `json:"whitelist,omitempty"`
}

// upstreamScheme is the name of the scheme upstream's errors name.
const upstreamScheme = "pkg/runtime/scheme.go:111"

// LoadConfiguration reads the plugin's configuration as upstream does: no
// reader gives an empty configuration; otherwise the document must be a
// v1alpha1 Configuration (JSON or YAML, unknown fields ignored, field
// names case-sensitive) whose tolerations are valid.
func LoadConfiguration(r io.Reader) (*Configuration, error) {
	if r == nil {
		return &Configuration{}, nil
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	j := data
	if !isJSON(data) {
		if j, err = yaml.YAMLToJSON(data); err != nil {
			return nil, err
		}
	}
	var tm struct {
		APIVersion string `json:"apiVersion,omitempty"`
		Kind       string `json:"kind,omitempty"`
	}
	if err := json.Unmarshal(j, &tm); err != nil {
		return nil, fmt.Errorf("couldn't get version/kind; json parse error: %v", err)
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil {
		return nil, err
	}
	switch {
	case tm.Kind == "":
		return nil, fmt.Errorf("Object 'Kind' is missing in '%s'", data) //nolint:staticcheck // upstream's words
	case gv.Version == "":
		return nil, fmt.Errorf("Object 'apiVersion' is missing in '%s'", data) //nolint:staticcheck // upstream's words
	case gv.Version == "__internal":
		return nil, fmt.Errorf("no kind %q is registered for the internal version of group %q in scheme %q", tm.Kind, gv.Group, upstreamScheme)
	case gv != configGroupVersion || tm.Kind != "Configuration":
		return nil, fmt.Errorf("no kind %q is registered for version %q in scheme %q", tm.Kind, gv.String(), upstreamScheme)
	}
	cfg := &Configuration{}
	if err := kjson.Unmarshal(j, cfg); err != nil {
		return nil, err
	}
	var errs field.ErrorList
	path := field.NewPath("podtolerationrestriction")
	errs = append(errs, validateTolerations(cfg.Default, path.Child("default"))...)
	errs = append(errs, validateTolerations(cfg.Whitelist, path.Child("whitelist"))...)
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid config: %v", errs)
	}
	return cfg, nil
}

// isJSON reports whether data is a JSON object, as the serializer sniffs it.
func isJSON(data []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{"))
}

// validateTolerations is upstream's toleration validation of pod specs
// (without the Lt and Gt operators).
func validateTolerations(ts []corev1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		p := path.Index(i)
		if t.Key != "" {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, p.Child("key"))...)
		}
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(p.Child("operator"), t.Operator,
				"operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(p.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			if msgs := validation.IsValidLabelValue(t.Value); len(msgs) != 0 {
				errs = append(errs, field.Invalid(p.Child("operator"), t.Value, strings.Join(msgs, ";")))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(p.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		case corev1.TolerationOpLt, corev1.TolerationOpGt:
			errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator,
				[]corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists, corev1.TolerationOpLt, corev1.TolerationOpGt}))
		default:
			errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator,
				[]corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
		}
		switch t.Effect {
		case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect,
				[]corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}))
		}
	}
	return errs
}
