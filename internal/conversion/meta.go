package conversion

import (
	"fmt"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// sameIdentity checks that a converted object is the object sent: same
// kind, name, namespace and UID.
func sameIdentity(in, out *unstructured.Unstructured) error {
	checks := []struct{ what, a, b string }{
		{"kind", in.GetKind(), out.GetKind()},
		{"name", in.GetName(), out.GetName()},
		{"namespace", in.GetNamespace(), out.GetNamespace()},
		{"UID", string(in.GetUID()), string(out.GetUID())},
	}
	for _, c := range checks {
		if c.a != c.b {
			return fmt.Errorf("must have the same %s: %v != %v", c.what, c.a, c.b)
		}
	}
	return nil
}

// keepMetadata gives converted the metadata of original, except for the
// labels and annotations the webhook answered, which it keeps (validated
// when they changed). Webhooks may change nothing else of metadata.
func keepMetadata(original, converted *unstructured.Unstructured) error {
	answered, ok := converted.Object["metadata"]
	if !ok {
		return fmt.Errorf("missing metadata in converted object")
	}
	answeredMeta, ok := answered.(map[string]any)
	if !ok {
		return fmt.Errorf("invalid metadata of type %T in converted object", answered)
	}
	restored := map[string]any{}
	if m, ok := original.Object["metadata"]; ok {
		copied, isMap := runtime.DeepCopyJSONValue(m).(map[string]any)
		if !isMap {
			return fmt.Errorf("invalid metadata of type %T in input object", m)
		}
		restored = copied
	}
	converted.Object["metadata"] = restored
	for _, name := range []string{"labels", "annotations"} {
		if err := keepStringMap(name, answeredMeta, restored); err != nil {
			return err
		}
	}
	return nil
}

// keepStringMap sets restored[name] to the webhook's answered[name].
func keepStringMap(name string, answered, restored map[string]any) error {
	v, found := answered[name]
	if !found || v == nil {
		delete(restored, name)
		return nil
	}
	got, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("invalid metadata.%s of type %T in converted object", name, v)
	}
	had, ok := restored[name].(map[string]any)
	if !ok && restored[name] != nil {
		return fmt.Errorf("invalid metadata.%s of type %T in original object", name, restored[name])
	}
	changed := len(had) != len(got)
	strs := make(map[string]string, len(got))
	for k, val := range got {
		s, isString := val.(string)
		if !isString {
			return fmt.Errorf("metadata.%s[%s] must be a string, but is %T in converted object", name, k, val)
		}
		if prev, ok := had[k].(string); !ok || prev != s {
			changed = true
		}
		strs[k] = s
	}
	if changed {
		if errs := validateStringMap(name, strs); len(errs) > 0 {
			return errs.ToAggregate()
		}
	}
	restored[name] = got
	return nil
}

func validateStringMap(name string, m map[string]string) field.ErrorList {
	if name == "labels" {
		return metav1validation.ValidateLabels(m, field.NewPath("metadata", "labels"))
	}
	// upstream's path says "annotation"
	return apivalidation.ValidateAnnotations(m, field.NewPath("metadata", "annotation"))
}
