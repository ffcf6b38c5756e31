package registry

import (
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// A Node's dynamic kubelet configuration source: the feature is removed,
// but upstream still checks the field (spec.configSource, kept only when
// stored) and the kubelet's report of it (status.config).

// nodeConfigSourceSpecErrors: exactly one source, a ConfigMap named
// without a uid or resourceVersion.
func nodeConfigSourceSpecErrors(source *corev1.NodeConfigSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if cm := source.ConfigMap; cm != nil {
		cp := p.Child("configMap")
		if cm.UID != "" {
			errs = append(errs, field.Forbidden(cp.Child("uid"), "uid must not be set in spec"))
		}
		if cm.ResourceVersion != "" {
			errs = append(errs, field.Forbidden(cp.Child("resourceVersion"), "resourceVersion must not be set in spec"))
		}
		errs = append(errs, configMapNodeConfigSourceErrors(cm, cp)...)
	}
	return append(errs, oneNodeConfigSource(source, p)...)
}

// nodeConfigStatusErrors checks the assigned, active and last known good
// sources, each with its uid and resourceVersion.
func nodeConfigStatusErrors(status *corev1.NodeConfigStatus, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, s := range []struct {
		name   string
		source *corev1.NodeConfigSource
	}{{"assigned", status.Assigned}, {"active", status.Active}, {"lastKnownGood", status.LastKnownGood}} {
		if s.source == nil {
			continue
		}
		sp := p.Child(s.name)
		if cm := s.source.ConfigMap; cm != nil {
			cp := sp.Child("configMap")
			if cm.UID == "" {
				errs = append(errs, field.Required(cp.Child("uid"), ""))
			}
			if cm.ResourceVersion == "" {
				errs = append(errs, field.Required(cp.Child("resourceVersion"), ""))
			}
			errs = append(errs, configMapNodeConfigSourceErrors(cm, cp)...)
		}
		errs = append(errs, oneNodeConfigSource(s.source, sp)...)
	}
	return errs
}

func oneNodeConfigSource(source *corev1.NodeConfigSource, p *field.Path) field.ErrorList {
	if source.ConfigMap != nil {
		return nil
	}
	return field.ErrorList{field.Invalid(p, internalNodeConfigSource(source), "exactly one reference subfield must be non-nil")}
}

// configMapNodeConfigSourceErrors: namespace, name and kubelet config key
// given and well formed.
func configMapNodeConfigSourceErrors(cm *corev1.ConfigMapNodeConfigSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if cm.Namespace == "" {
		errs = append(errs, field.Required(p.Child("namespace"), ""))
	} else {
		for _, msg := range apivalidation.ValidateNamespaceName(cm.Namespace, false) {
			errs = append(errs, field.Invalid(p.Child("namespace"), cm.Namespace, msg))
		}
	}
	if cm.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		for _, msg := range apivalidation.NameIsDNSSubdomain(cm.Name, false) {
			errs = append(errs, field.Invalid(p.Child("name"), cm.Name, msg))
		}
	}
	if cm.KubeletConfigKey == "" {
		errs = append(errs, field.Required(p.Child("kubeletConfigKey"), ""))
	} else {
		for _, msg := range validation.IsConfigMapKey(cm.KubeletConfigKey) {
			errs = append(errs, field.Invalid(p.Child("kubeletConfigKey"), cm.KubeletConfigKey, msg))
		}
	}
	return errs
}

// internalNodeConfigSourceValue has the shape of upstream's internal
// NodeConfigSource (no json tags), so it renders in errors as upstream's.
type internalNodeConfigSourceValue struct {
	ConfigMap *internalConfigMapNodeConfigSource
}

type internalConfigMapNodeConfigSource struct {
	Namespace, Name  string
	UID              types.UID
	ResourceVersion  string
	KubeletConfigKey string
}

func internalNodeConfigSource(s *corev1.NodeConfigSource) *internalNodeConfigSourceValue {
	out := &internalNodeConfigSourceValue{}
	if cm := s.ConfigMap; cm != nil {
		out.ConfigMap = &internalConfigMapNodeConfigSource{Namespace: cm.Namespace, Name: cm.Name, UID: cm.UID,
			ResourceVersion: cm.ResourceVersion, KubeletConfigKey: cm.KubeletConfigKey}
	}
	return out
}
