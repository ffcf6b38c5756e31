package registry

import (
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Container validation, following upstream pkg/apis/core/validation
// (validateContainers, validateInitContainers, validateContainerCommon and
// helpers) message for message.

var supportedPortProtocols = []corev1.Protocol{corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP}

func validateContainers(containers []corev1.Container, vols map[string]corev1.VolumeSource, claims sets.Set[string], grace *int64, fldPath *field.Path, restartPolicy corev1.RestartPolicy) field.ErrorList {
	if len(containers) == 0 {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range containers {
		c, path := &containers[i], fldPath.Index(i)
		errs = append(errs, validateContainerCommon(c, vols, claims, path, restartPolicy)...)
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(path.Child("name"), c.Name))
		} else {
			names.Insert(c.Name)
		}
		errs = append(errs, validateProbesAndLifecycle(c, grace, path)...)
		if c.RestartPolicy != nil {
			errs = append(errs, field.Forbidden(path.Child("restartPolicy"), "may not be set for non-init containers"))
		}
	}
	return append(errs, checkHostPortConflicts(containers, fldPath)...)
}

func validateProbesAndLifecycle(c *corev1.Container, grace *int64, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Lifecycle != nil {
		errs = append(errs, validateLifecycle(c.Lifecycle, grace, path.Child("lifecycle"))...)
	}
	errs = append(errs, validateProbe(c.LivenessProbe, grace, path.Child("livenessProbe"), true)...)
	if p := c.ReadinessProbe; p != nil {
		errs = append(errs, validateProbe(p, grace, path.Child("readinessProbe"), false)...)
		if p.TerminationGracePeriodSeconds != nil {
			errs = append(errs, field.Invalid(path.Child("readinessProbe", "terminationGracePeriodSeconds"), p.TerminationGracePeriodSeconds, "must not be set for readinessProbes"))
		}
	}
	return append(errs, validateProbe(c.StartupProbe, grace, path.Child("startupProbe"), true)...)
}

func validateInitContainers(containers, regular []corev1.Container, vols map[string]corev1.VolumeSource, claims sets.Set[string], grace *int64, fldPath *field.Path, restartPolicy corev1.RestartPolicy, restartContainerAllowed bool) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for _, c := range regular {
		names.Insert(c.Name)
	}
	const notSidecar = "may not be set for init containers without restartPolicy=Always"
	for i := range containers {
		c, path := &containers[i], fldPath.Index(i)
		errs = append(errs, validateContainerCommon(c, vols, claims, path, restartPolicy)...)
		sidecar := false
		if c.RestartPolicy != nil {
			if *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
				errs = append(errs, field.NotSupported(path.Child("restartPolicy"), *c.RestartPolicy, []corev1.ContainerRestartPolicy{corev1.ContainerRestartPolicyAlways}))
			}
			sidecar = *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		}
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(path.Child("name"), c.Name))
		} else if c.Name != "" {
			names.Insert(c.Name)
		}
		errs = append(errs, checkHostPortConflicts(containers[i:i+1], fldPath)...)
		if sidecar {
			errs = append(errs, validateProbesAndLifecycle(c, grace, path)...)
		} else {
			for _, f := range []struct {
				set  bool
				name string
			}{{c.Lifecycle != nil, "lifecycle"}, {c.LivenessProbe != nil, "livenessProbe"}, {c.ReadinessProbe != nil, "readinessProbe"}, {c.StartupProbe != nil, "startupProbe"}} {
				if f.set {
					errs = append(errs, field.Forbidden(path.Child(f.name), notSidecar))
				}
			}
		}
		if !sidecar && !restartContainerAllowed {
			for j, p := range c.ResizePolicy {
				if p.RestartPolicy == corev1.RestartContainer {
					errs = append(errs, field.Invalid(path.Child("resizePolicy").Index(j).Child("restartPolicy"), p.RestartPolicy,
						"must not be set to 'RestartContainer' for non-sidecar initContainers"))
				}
			}
		}
	}
	return errs
}

// hasNonSidecarRestartContainer: a non-sidecar init container of spec has
// a RestartContainer resize policy (nil spec: no).
func hasNonSidecarRestartContainer(spec *corev1.PodSpec) bool {
	if spec == nil {
		return false
	}
	for i := range spec.InitContainers {
		if isSidecar(&spec.InitContainers[i]) {
			continue
		}
		for _, p := range spec.InitContainers[i].ResizePolicy {
			if p.RestartPolicy == corev1.RestartContainer {
				return true
			}
		}
	}
	return false
}

// validateEphemeralContainers checks ephemeral containers against the regular
// and init containers (pods only get them through a subresource).
func validateEphemeralContainers(ephemeral []corev1.EphemeralContainer, containers, inits []corev1.Container, vols map[string]corev1.VolumeSource, claims sets.Set[string], fldPath *field.Path, restartPolicy corev1.RestartPolicy) field.ErrorList {
	var errs field.ErrorList
	others, all := sets.New[string](), sets.New[string]()
	for _, c := range append(append([]corev1.Container{}, containers...), inits...) {
		others.Insert(c.Name)
		all.Insert(c.Name)
	}
	for i := range ephemeral {
		ec, path := &ephemeral[i], fldPath.Index(i)
		c := (*corev1.Container)(&ec.EphemeralContainerCommon)
		errs = append(errs, validateContainerCommon(c, vols, claims, path, restartPolicy)...)
		errs = append(errs, validateImageWhitespace(c, path)...)
		if all.Has(ec.Name) {
			errs = append(errs, field.Duplicate(path.Child("name"), ec.Name))
		} else {
			all.Insert(ec.Name)
		}
		if ec.TargetContainerName != "" && !others.Has(ec.TargetContainerName) {
			errs = append(errs, field.NotFound(path.Child("targetContainerName"), ec.TargetContainerName))
		}
		errs = append(errs, validateFieldAllowList(ec.EphemeralContainerCommon, ephemeralContainerFields, "cannot be set for an Ephemeral Container", path)...)
		for j, vm := range ec.VolumeMounts {
			if vm.SubPath != "" {
				errs = append(errs, field.Forbidden(path.Child("volumeMounts").Index(j).Child("subPath"), "cannot be set for an Ephemeral Container"))
			}
			if vm.SubPathExpr != "" {
				errs = append(errs, field.Forbidden(path.Child("volumeMounts").Index(j).Child("subPathExpr"), "cannot be set for an Ephemeral Container"))
			}
		}
	}
	return errs
}

// ephemeralContainerFields are the container fields an ephemeral container
// may set.
var ephemeralContainerFields = map[string]bool{
	"Name": true, "Image": true, "Command": true, "Args": true, "WorkingDir": true,
	"EnvFrom": true, "Env": true, "VolumeMounts": true, "VolumeDevices": true,
	"TerminationMessagePath": true, "TerminationMessagePolicy": true, "ImagePullPolicy": true,
	"SecurityContext": true, "Stdin": true, "StdinOnce": true, "TTY": true,
}

// validateFieldAllowList forbids every non-zero field of the struct value
// that allowed does not list, in declaration order.
func validateFieldAllowList(value any, allowed map[string]bool, detail string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	v := reflect.ValueOf(value)
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if allowed[f.Name] || v.Field(i).IsZero() {
			continue
		}
		errs = append(errs, field.Forbidden(path.Child(strings.ToLower(f.Name[:1])+f.Name[1:]), detail))
	}
	return errs
}

func validateContainerCommon(c *corev1.Container, vols map[string]corev1.VolumeSource, claims sets.Set[string], path *field.Path, restartPolicy corev1.RestartPolicy) field.ErrorList {
	var errs field.ErrorList
	if c.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	} else {
		errs = append(errs, dns1123Label(c.Name, path.Child("name"))...)
	}
	if c.Image == "" {
		errs = append(errs, field.Required(path.Child("image"), ""))
	}
	switch c.TerminationMessagePolicy {
	case corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError:
	case "":
		errs = append(errs, field.Required(path.Child("terminationMessagePolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(path.Child("terminationMessagePolicy"), c.TerminationMessagePolicy,
			[]corev1.TerminationMessagePolicy{corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError}))
	}
	errs = append(errs, validateContainerPorts(c.Ports, path.Child("ports"))...)
	errs = append(errs, validateEnv(c.Env, path.Child("env"))...)
	errs = append(errs, validateEnvFrom(c.EnvFrom, path.Child("envFrom"))...)
	errs = append(errs, validateVolumeMounts(c, vols, path.Child("volumeMounts"))...)
	errs = append(errs, validateVolumeDevices(c, vols, path.Child("volumeDevices"))...)
	errs = append(errs, validatePullPolicy(c.ImagePullPolicy, path.Child("imagePullPolicy"))...)
	errs = append(errs, validateResourceRequirements(&c.Resources, claims, path.Child("resources"))...)
	errs = append(errs, validateResizePolicy(c.ResizePolicy, path.Child("resizePolicy"), restartPolicy)...)
	return append(errs, validateSecurityContext(c.SecurityContext, path.Child("securityContext"))...)
}

func validateImageWhitespace(c *corev1.Container, path *field.Path) field.ErrorList {
	if len(c.Image) != len(strings.TrimSpace(c.Image)) {
		return field.ErrorList{field.Invalid(path.Child("image"), c.Image, "must not have leading or trailing whitespace")}
	}
	return nil
}

func validateContainerPorts(ports []corev1.ContainerPort, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, p := range ports {
		path := fldPath.Index(i)
		if p.Name != "" {
			if msgs := validation.IsValidPortName(p.Name); len(msgs) > 0 {
				for _, msg := range msgs {
					errs = append(errs, field.Invalid(path.Child("name"), p.Name, msg))
				}
			} else if names.Has(p.Name) {
				errs = append(errs, field.Duplicate(path.Child("name"), p.Name))
			} else {
				names.Insert(p.Name)
			}
		}
		if p.ContainerPort == 0 {
			errs = append(errs, field.Required(path.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(p.ContainerPort)) {
				errs = append(errs, field.Invalid(path.Child("containerPort"), p.ContainerPort, msg))
			}
		}
		if p.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(p.HostPort)) {
				errs = append(errs, field.Invalid(path.Child("hostPort"), p.HostPort, msg))
			}
		}
		errs = append(errs, validateProtocol(p.Protocol, path.Child("protocol"))...)
	}
	return errs
}

func validateProtocol(p corev1.Protocol, path *field.Path) field.ErrorList {
	switch p {
	case "":
		return field.ErrorList{field.Required(path, "")}
	case corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
		return nil
	}
	return field.ErrorList{field.NotSupported(path, p, supportedPortProtocols)}
}

// checkHostPortConflicts rejects two ports claiming the same
// protocol/hostIP/hostPort.
func checkHostPortConflicts(containers []corev1.Container, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for ci, c := range containers {
		for pi, p := range c.Ports {
			if p.HostPort == 0 {
				continue
			}
			key := fmt.Sprintf("%s/%s/%d", p.Protocol, p.HostIP, p.HostPort)
			if seen.Has(key) {
				errs = append(errs, field.Duplicate(fldPath.Index(ci).Child("ports").Index(pi).Child("hostPort"), key))
			}
			seen.Insert(key)
		}
	}
	return errs
}

func validatePullPolicy(p corev1.PullPolicy, path *field.Path) field.ErrorList {
	switch p {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		return nil
	case "":
		return field.ErrorList{field.Required(path, "")}
	}
	return field.ErrorList{field.NotSupported(path, p, []corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever})}
}

func validateResizePolicy(policies []corev1.ContainerResizePolicy, path *field.Path, restartPolicy corev1.RestartPolicy) field.ErrorList {
	var errs field.ErrorList
	seen := map[corev1.ResourceName]bool{}
	for i, p := range policies {
		if seen[p.ResourceName] {
			errs = append(errs, field.Duplicate(path.Index(i), p.ResourceName))
		}
		seen[p.ResourceName] = true
		switch p.ResourceName {
		case corev1.ResourceCPU, corev1.ResourceMemory:
		case "":
			errs = append(errs, field.Required(path, ""))
		default:
			errs = append(errs, field.NotSupported(path, p.ResourceName, []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}))
		}
		switch p.RestartPolicy {
		case corev1.NotRequired, corev1.RestartContainer:
		case "":
			errs = append(errs, field.Required(path, ""))
		default:
			errs = append(errs, field.NotSupported(path, p.RestartPolicy, []corev1.ResourceResizeRestartPolicy{corev1.NotRequired, corev1.RestartContainer}))
		}
		if restartPolicy == corev1.RestartPolicyNever && p.RestartPolicy != corev1.NotRequired {
			errs = append(errs, field.Invalid(path, p.RestartPolicy, "must be 'NotRequired' when `restartPolicy` is 'Never'"))
		}
	}
	return errs
}

func validateSecurityContext(sc *corev1.SecurityContext, path *field.Path) field.ErrorList {
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	if sc.Privileged != nil && *sc.Privileged {
		errs = append(errs, field.Forbidden(path.Child("privileged"), privilegedDisallowed))
	}
	if sc.RunAsUser != nil {
		for _, msg := range validation.IsValidUserID(*sc.RunAsUser) {
			errs = append(errs, field.Invalid(path.Child("runAsUser"), *sc.RunAsUser, msg))
		}
	}
	if sc.RunAsGroup != nil {
		for _, msg := range validation.IsValidGroupID(*sc.RunAsGroup) {
			errs = append(errs, field.Invalid(path.Child("runAsGroup"), *sc.RunAsGroup, msg))
		}
	}
	if sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount && *sc.ProcMount != corev1.UnmaskedProcMount {
		errs = append(errs, field.NotSupported(path.Child("procMount"), *sc.ProcMount, []corev1.ProcMountType{corev1.DefaultProcMount, corev1.UnmaskedProcMount}))
	}
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		if sc.Privileged != nil && *sc.Privileged {
			errs = append(errs, field.Invalid(path, sc, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
		}
		if sc.Capabilities != nil {
			for _, c := range sc.Capabilities.Add {
				if c == "CAP_SYS_ADMIN" {
					errs = append(errs, field.Invalid(path, sc, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"))
				}
			}
		}
	}
	return errs
}

func dns1123Label(value string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(value) {
		errs = append(errs, field.Invalid(path, value, msg).WithOrigin("format=dns-label"))
	}
	return errs
}

func dns1123Subdomain(value string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(value) {
		errs = append(errs, field.Invalid(path, value, msg))
	}
	return errs
}

func qualifiedName(value string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(value) {
		errs = append(errs, field.Invalid(path, value, msg).WithOrigin("format=qualified-name"))
	}
	return errs
}
