package registry

import (
	"fmt"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation of the fields inside a container: environment, mounts, probes,
// lifecycle handlers.

// validEnvFieldPaths are the downward API paths an env var may reference.
var validEnvFieldPaths = sets.New("metadata.name", "metadata.namespace", "metadata.uid",
	"spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")

var validResourceFieldPaths = sets.New("limits.cpu", "limits.memory", "limits.ephemeral-storage",
	"requests.cpu", "requests.memory", "requests.ephemeral-storage")

func validateEnv(vars []corev1.EnvVar, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ev := range vars {
		path := fldPath.Index(i)
		if ev.Name == "" {
			errs = append(errs, field.Required(path.Child("name"), ""))
		} else {
			// RelaxedEnvironmentVariableValidation is GA: any printable
			// ASCII except '='.
			for _, msg := range validation.IsRelaxedEnvVarName(ev.Name) {
				errs = append(errs, field.Invalid(path.Child("name"), ev.Name, msg))
			}
		}
		errs = append(errs, validateEnvValueFrom(ev, path.Child("valueFrom"))...)
	}
	return errs
}

func validateEnvValueFrom(ev corev1.EnvVar, path *field.Path) field.ErrorList {
	from := ev.ValueFrom
	if from == nil {
		return nil
	}
	var errs field.ErrorList
	n := 0
	if from.FieldRef != nil {
		n++
		errs = append(errs, validateFieldSelector(from.FieldRef, validEnvFieldPaths, path.Child("fieldRef"))...)
	}
	if r := from.ResourceFieldRef; r != nil {
		n++
		if r.Resource == "" {
			errs = append(errs, field.Required(path.Child("resourceFieldRef", "resource"), ""))
		} else if !validResourceFieldPaths.Has(r.Resource) && !strings.HasPrefix(r.Resource, "requests.hugepages-") && !strings.HasPrefix(r.Resource, "limits.hugepages-") {
			errs = append(errs, field.NotSupported(path.Child("resourceFieldRef", "resource"), r.Resource, sets.List(validResourceFieldPaths)))
		}
	}
	if r := from.ConfigMapKeyRef; r != nil {
		n++
		errs = append(errs, validateKeySelector(r.Name, r.Key, path.Child("configMapKeyRef"))...)
	}
	if r := from.SecretKeyRef; r != nil {
		n++
		errs = append(errs, validateKeySelector(r.Name, r.Key, path.Child("secretKeyRef"))...)
	}
	if from.FileKeyRef != nil {
		n++
	}
	switch {
	case n == 0:
		errs = append(errs, field.Invalid(path, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"))
	case ev.Value != "":
		errs = append(errs, field.Invalid(path, "", "may not be specified when `value` is not empty"))
	case n > 1:
		errs = append(errs, field.Invalid(path, "", "may not have more than one field specified at a time"))
	}
	return errs
}

func validateFieldSelector(s *corev1.ObjectFieldSelector, allowed sets.Set[string], path *field.Path) field.ErrorList {
	if s.APIVersion == "" {
		return field.ErrorList{field.Required(path.Child("apiVersion"), "")}
	}
	if s.FieldPath == "" {
		return field.ErrorList{field.Required(path.Child("fieldPath"), "")}
	}
	if s.APIVersion != "v1" {
		return field.ErrorList{field.Invalid(path.Child("fieldPath"), s.FieldPath,
			fmt.Sprintf("error converting fieldPath: unsupported pod version: %s", s.APIVersion))}
	}
	if base, key, ok := splitSubscript(s.FieldPath); ok {
		switch base {
		case "metadata.annotations":
			return qualifiedName(strings.ToLower(key), path)
		case "metadata.labels":
			return qualifiedName(key, path)
		}
		return field.ErrorList{field.Invalid(path, base, "does not support subscript")}
	}
	if !allowed.Has(s.FieldPath) {
		return field.ErrorList{field.NotSupported(path.Child("fieldPath"), s.FieldPath, sets.List(allowed))}
	}
	return nil
}

// splitSubscript splits "metadata.labels['key']" into its path and key.
func splitSubscript(p string) (base, key string, ok bool) {
	open := strings.Index(p, "['")
	if open < 0 || !strings.HasSuffix(p, "']") || open+2 > len(p)-2 {
		return p, "", false
	}
	return p[:open], p[open+2 : len(p)-2], true
}

func validateKeySelector(name, key string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range apivalidation.NameIsDNSSubdomain(name, false) {
		errs = append(errs, field.Invalid(path.Child("name"), name, msg))
	}
	if key == "" {
		return append(errs, field.Required(path.Child("key"), ""))
	}
	for _, msg := range validation.IsConfigMapKey(key) {
		errs = append(errs, field.Invalid(path.Child("key"), key, msg))
	}
	return errs
}

func validateEnvFrom(sources []corev1.EnvFromSource, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, src := range sources {
		path := fldPath.Index(i)
		if src.Prefix != "" {
			for _, msg := range validation.IsRelaxedEnvVarName(src.Prefix) {
				errs = append(errs, field.Invalid(path.Child("prefix"), src.Prefix, msg))
			}
		}
		n := 0
		if src.ConfigMapRef != nil {
			n++
			errs = append(errs, validateEnvSourceName(src.ConfigMapRef.Name, path.Child("configMapRef"))...)
		}
		if src.SecretRef != nil {
			n++
			errs = append(errs, validateEnvSourceName(src.SecretRef.Name, path.Child("secretRef"))...)
		}
		if n == 0 {
			errs = append(errs, field.Invalid(fldPath, "", "must specify one of: `configMapRef` or `secretRef`"))
		} else if n > 1 {
			errs = append(errs, field.Invalid(fldPath, "", "may not have more than one field specified at a time"))
		}
	}
	return errs
}

func validateEnvSourceName(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path.Child("name"), "")}
	}
	var errs field.ErrorList
	for _, msg := range apivalidation.NameIsDNSSubdomain(name, true) {
		errs = append(errs, field.Invalid(path.Child("name"), name, msg))
	}
	return errs
}

func validateVolumeMounts(c *corev1.Container, vols map[string]corev1.VolumeSource, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	devices := map[string]string{}
	for _, d := range c.VolumeDevices {
		devices[d.Name] = d.DevicePath
	}
	mountPaths := sets.New[string]()
	for i, m := range c.VolumeMounts {
		path := fldPath.Index(i)
		if m.Name == "" {
			errs = append(errs, field.Required(path.Child("name"), ""))
		}
		if _, ok := vols[m.Name]; !ok {
			errs = append(errs, field.NotFound(path.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(path.Child("mountPath"), ""))
		}
		if mountPaths.Has(m.MountPath) {
			errs = append(errs, field.Invalid(path.Child("mountPath"), m.MountPath, "must be unique"))
		}
		mountPaths.Insert(m.MountPath)
		if _, ok := devices[m.Name]; ok {
			errs = append(errs, field.Invalid(path.Child("name"), m.Name, "must not already exist in volumeDevices"))
		}
		for _, p := range devices {
			if p == m.MountPath {
				errs = append(errs, field.Invalid(path.Child("mountPath"), m.MountPath, "must not already exist as a path in volumeDevices"))
			}
		}
		if m.SubPath != "" {
			errs = append(errs, validateLocalDescendingPath(m.SubPath, fldPath.Child("subPath"))...)
		}
		if m.SubPathExpr != "" {
			if m.SubPath != "" {
				errs = append(errs, field.Invalid(path.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
			}
			errs = append(errs, validateLocalDescendingPath(m.SubPathExpr, fldPath.Child("subPathExpr"))...)
		}
		errs = append(errs, validateMountPropagation(m, c, fldPath.Child("mountPropagation"))...)
	}
	return errs
}

func validateMountPropagation(m corev1.VolumeMount, c *corev1.Container, path *field.Path) field.ErrorList {
	if m.MountPropagation == nil {
		return nil
	}
	var errs field.ErrorList
	supported := []corev1.MountPropagationMode{corev1.MountPropagationBidirectional, corev1.MountPropagationHostToContainer, corev1.MountPropagationNone}
	switch *m.MountPropagation {
	case corev1.MountPropagationBidirectional, corev1.MountPropagationHostToContainer, corev1.MountPropagationNone:
	default:
		errs = append(errs, field.NotSupported(path, *m.MountPropagation, supported))
	}
	privileged := c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged
	if *m.MountPropagation == corev1.MountPropagationBidirectional && !privileged {
		errs = append(errs, field.Forbidden(path, "Bidirectional mount propagation is available only to privileged containers"))
	}
	return errs
}

func validateVolumeDevices(c *corev1.Container, vols map[string]corev1.VolumeSource, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	names, paths := sets.New[string](), sets.New[string]()
	for i, d := range c.VolumeDevices {
		path := fldPath.Index(i)
		src, found := vols[d.Name]
		if d.Name == "" {
			errs = append(errs, field.Required(path.Child("name"), ""))
		}
		if names.Has(d.Name) {
			errs = append(errs, field.Invalid(path.Child("name"), d.Name, "must be unique"))
		}
		if found && src.PersistentVolumeClaim == nil && src.Ephemeral == nil {
			errs = append(errs, field.Invalid(path.Child("name"), d.Name, "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"))
		}
		if !found {
			errs = append(errs, field.NotFound(path.Child("name"), d.Name))
		}
		if d.DevicePath == "" {
			errs = append(errs, field.Required(path.Child("devicePath"), ""))
		}
		if paths.Has(d.DevicePath) {
			errs = append(errs, field.Invalid(path.Child("devicePath"), d.DevicePath, "must be unique"))
		}
		if d.DevicePath != "" && hasBackstep(d.DevicePath) {
			errs = append(errs, field.Invalid(path.Child("devicePath"), d.DevicePath, "can not contain backsteps ('..')"))
		} else {
			paths.Insert(d.DevicePath)
		}
		if _, ok := mounts[d.Name]; ok {
			errs = append(errs, field.Invalid(path.Child("name"), d.Name, "must not already exist in volumeMounts"))
		}
		for _, p := range mounts {
			if p == d.DevicePath {
				errs = append(errs, field.Invalid(path.Child("devicePath"), d.DevicePath, "must not already exist as a path in volumeMounts"))
			}
		}
		if d.Name != "" {
			names.Insert(d.Name)
		}
	}
	return errs
}

func hasBackstep(p string) bool {
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if part == ".." {
			return true
		}
	}
	return false
}

func validateNoBacksteps(p string, path *field.Path) field.ErrorList {
	if hasBackstep(p) {
		return field.ErrorList{field.Invalid(path, p, "must not contain '..'")}
	}
	return nil
}

func validateLocalDescendingPath(p string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") {
		errs = append(errs, field.Invalid(path, p, "must be a relative path"))
	}
	return append(errs, validateNoBacksteps(p, path)...)
}

func validateLocalNonReservedPath(p string, path *field.Path) field.ErrorList {
	errs := validateLocalDescendingPath(p, path)
	if strings.HasPrefix(p, "..") && !strings.HasPrefix(p, "../") {
		errs = append(errs, field.Invalid(path, p, "must not start with '..'"))
	}
	return errs
}

// validateProbe validates a probe; liveness and startup probes also require
// successThreshold 1.
func validateProbe(p *corev1.Probe, grace *int64, path *field.Path, successMustBeOne bool) field.ErrorList {
	if p == nil {
		return nil
	}
	h := p.ProbeHandler
	errs := validateHandler(h.Exec, h.HTTPGet, h.TCPSocket, h.GRPC, nil, grace, path)
	for _, f := range []struct {
		name  string
		value int32
	}{{"initialDelaySeconds", p.InitialDelaySeconds}, {"timeoutSeconds", p.TimeoutSeconds}, {"periodSeconds", p.PeriodSeconds}, {"successThreshold", p.SuccessThreshold}, {"failureThreshold", p.FailureThreshold}} {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(f.value), path.Child(f.name))...)
	}
	if p.TerminationGracePeriodSeconds != nil && *p.TerminationGracePeriodSeconds <= 0 {
		errs = append(errs, field.Invalid(path.Child("terminationGracePeriodSeconds"), *p.TerminationGracePeriodSeconds, "must be greater than 0"))
	}
	if successMustBeOne && p.SuccessThreshold != 1 {
		errs = append(errs, field.Invalid(path.Child("successThreshold"), p.SuccessThreshold, "must be 1"))
	}
	return errs
}

func validateLifecycle(l *corev1.Lifecycle, grace *int64, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, h := range []struct {
		name    string
		handler *corev1.LifecycleHandler
	}{{"postStart", l.PostStart}, {"preStop", l.PreStop}} {
		if h.handler != nil {
			errs = append(errs, validateHandler(h.handler.Exec, h.handler.HTTPGet, h.handler.TCPSocket, nil, h.handler.Sleep, grace, path.Child(h.name))...)
		}
	}
	return errs
}

// validateHandler requires exactly one handler type.
func validateHandler(exec *corev1.ExecAction, get *corev1.HTTPGetAction, tcp *corev1.TCPSocketAction, grpc *corev1.GRPCAction, sleep *corev1.SleepAction, grace *int64, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	check := func(set bool, name string, validate func() field.ErrorList) {
		if !set {
			return
		}
		if n > 0 {
			errs = append(errs, field.Forbidden(path.Child(name), "may not specify more than 1 handler type"))
			return
		}
		n++
		errs = append(errs, validate()...)
	}
	check(exec != nil, "exec", func() field.ErrorList {
		if len(exec.Command) == 0 {
			return field.ErrorList{field.Required(path.Child("exec", "command"), "")}
		}
		return nil
	})
	check(get != nil, "httpGet", func() field.ErrorList { return validateHTTPGet(get, path.Child("httpGet")) })
	check(tcp != nil, "tcpSocket", func() field.ErrorList { return validatePortNumOrName(tcp.Port, path.Child("tcpSocket", "port")) })
	check(grpc != nil, "grpc", func() field.ErrorList {
		return validatePortNumOrName(intstr.FromInt32(grpc.Port), path.Child("grpc", "port"))
	})
	check(sleep != nil, "sleep", func() field.ErrorList {
		if grace != nil && (sleep.Seconds < 0 || sleep.Seconds > *grace) {
			return field.ErrorList{field.Invalid(path.Child("sleep"), sleep.Seconds,
				fmt.Sprintf("must be non-negative and less than terminationGracePeriodSeconds (%d)", *grace))}
		}
		return nil
	})
	if n == 0 {
		errs = append(errs, field.Required(path, "must specify a handler type"))
	}
	return errs
}

func validateHTTPGet(h *corev1.HTTPGetAction, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if h.Path == "" {
		errs = append(errs, field.Required(path.Child("path"), ""))
	}
	errs = append(errs, validatePortNumOrName(h.Port, path.Child("port"))...)
	if h.Scheme != corev1.URISchemeHTTP && h.Scheme != corev1.URISchemeHTTPS {
		errs = append(errs, field.NotSupported(path.Child("scheme"), h.Scheme, []corev1.URIScheme{corev1.URISchemeHTTP, corev1.URISchemeHTTPS}))
	}
	for _, header := range h.HTTPHeaders {
		for _, msg := range validation.IsHTTPHeaderName(header.Name) {
			errs = append(errs, field.Invalid(path.Child("httpHeaders"), header.Name, msg))
		}
	}
	return errs
}

func validatePortNumOrName(port intstr.IntOrString, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch port.Type {
	case intstr.Int:
		for _, msg := range validation.IsValidPortNum(port.IntValue()) {
			errs = append(errs, field.Invalid(path, port.IntValue(), msg))
		}
	case intstr.String:
		for _, msg := range validation.IsValidPortName(port.StrVal) {
			errs = append(errs, field.Invalid(path, port.StrVal, msg))
		}
	default:
		errs = append(errs, field.InternalError(path, fmt.Errorf("unknown type: %v", port.Type)))
	}
	return errs
}
