package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The handwritten validation of the resource.k8s.io kinds shared by
// claims, slices, classes and taint rules (upstream's
// pkg/apis/resource/validation). An error that 1.37's declarative rules
// also report is marked covered, with the origin upstream gives it, so
// withDeclarative can replace it by the declarative one.

// draNormalization maps v1beta1's flattened request and device paths to
// v1's, as upstream's ResourceNormalizationRules (v1 paths are unchanged);
// compiled on first use.
var draNormalization = sync.OnceValue(func() []field.NormalizationRule {
	return []field.NormalizationRule{
		{Regexp: regexp.MustCompile(`spec\.devices\.requests\[(\d+)\]\.(deviceClassName|selectors|allocationMode|count|adminAccess|tolerations|derivedAttributes)`),
			Replacement: "spec.devices.requests[$1].exactly.$2"},
		{Regexp: regexp.MustCompile(`spec\.spec\.devices\.requests\[(\d+)\]\.(deviceClassName|selectors|allocationMode|count|adminAccess|tolerations|derivedAttributes)`),
			Replacement: "spec.spec.devices.requests[$1].exactly.$2"},
		{Regexp: regexp.MustCompile(`spec\.devices\[(\d+)\]\.basic\.`), Replacement: "spec.devices[$1]."},
	}
})

// withDeclarative combines a write's handwritten errors with the
// declarative ones as kube-apiserver 1.37 does (DeclarativeValidationBeta
// on): the declarative errors that are enforced (standard and beta) are
// appended after the handwritten ones, less those they cover; the
// handwritten errors lose a repeated message on the way.
func withDeclarative(handwritten, declarative field.ErrorList) field.ErrorList {
	ctx := context.Background()
	enforced := validate.FilterEnforcedDeclarativeErrors(ctx, declarative, true)
	out := validate.FilterCoveredHandwrittenErrors(ctx, handwritten.MarkFromImperative(), enforced, true, draNormalization()...)
	return append(out, enforced...)
}

// listRule says which checks of a list or map the declarative rules cover.
type listRule uint8

const (
	itemsCovered listRule = 1 << iota
	sizeCovered
	uniqueCovered
	keysCovered
)

func (r listRule) has(c listRule) bool { return r&c != 0 }

// tooManyItems is the error of a list longer than max (a negative max has
// no limit), which ends its validation.
func tooManyItems(n, max int, p *field.Path, rule listRule) field.ErrorList {
	if max < 0 || n <= max {
		return nil
	}
	e := field.TooMany(p, n, max).WithOrigin("maxItems")
	if rule.has(sizeCovered) {
		e = e.MarkCoveredByDeclarative()
	}
	return field.ErrorList{e}
}

// eachItem checks at most max items (a longer list is one error) with
// check.
func eachItem[T any](list []T, max int, p *field.Path, rule listRule, check func(T, *field.Path) field.ErrorList) field.ErrorList {
	if errs := tooManyItems(len(list), max, p, rule); errs != nil {
		return errs
	}
	var errs field.ErrorList
	for i, item := range list {
		e := check(item, p.Index(i))
		if rule.has(itemsCovered) {
			e = e.MarkCoveredByDeclarative()
		}
		errs = append(errs, e...)
	}
	return errs
}

// eachUnique is eachItem, then a Duplicate error for each item whose key
// an earlier one has.
func eachUnique[T any, K comparable](list []T, max int, p *field.Path, rule listRule, check func(T, *field.Path) field.ErrorList, key func(T) K) field.ErrorList {
	if errs := tooManyItems(len(list), max, p, rule); errs != nil {
		return errs
	}
	errs := eachItem(list, -1, p, rule, check)
	seen := map[K]bool{}
	for i, item := range list {
		k := key(item)
		if !seen[k] {
			seen[k] = true
			continue
		}
		e := field.Duplicate(p.Index(i), k)
		if rule.has(uniqueCovered) {
			e = e.MarkCoveredByDeclarative()
		}
		errs = append(errs, e)
	}
	return errs
}

func noCheck[T any](T, *field.Path) field.ErrorList { return nil }

func sameString(s string) string { return s }

// eachEntry checks at most max entries of a map (in map order, as
// upstream): each key at p (truncated keys name the entry's path), each
// value at p[key].
func eachEntry[K ~string, V any](m map[K]V, max, truncate int, p *field.Path, rule listRule,
	checkKey func(K, *field.Path) field.ErrorList, check func(V, *field.Path) field.ErrorList) field.ErrorList {
	if max >= 0 && len(m) > max {
		return field.ErrorList{field.TooMany(p, len(m), max)}
	}
	var errs field.ErrorList
	for k, v := range m {
		ke := checkKey(k, p)
		if rule.has(keysCovered) {
			ke = ke.MarkCoveredByDeclarative()
		}
		errs = append(errs, ke...)
		errs = append(errs, check(v, p.Key(truncateMiddle(string(k), truncate)))...)
	}
	return errs
}

// truncateMiddle shortens s to max characters (at least 16) with "..." in
// the middle.
func truncateMiddle(s string, max int) string {
	if max < 16 {
		max = 16
	}
	if len(s) <= max {
		return s
	}
	rest := max - 3
	return s[:(rest+1)/2] + "..." + s[len(s)-rest/2:]
}

// dnsLabel and dnsSubdomain are the short and long name rules, with the
// origins the declarative rules give them.
func dnsLabel(s string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(s) {
		errs = append(errs, field.Invalid(p, s, msg).WithOrigin("format=k8s-short-name"))
	}
	return errs
}

func dnsSubdomain(s string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(s) {
		errs = append(errs, field.Invalid(p, s, msg).WithOrigin("format=k8s-long-name"))
	}
	return errs
}

// driverName is the rule of a CSI driver name, which DRA driver names
// share; rule says which of its checks the declarative rules cover
// (sizeCovered for the length, itemsCovered for the required value and
// the format).
func driverName(name string, p *field.Path, rule listRule) field.ErrorList {
	if name == "" {
		e := field.Required(p, "")
		if rule.has(itemsCovered) {
			e = e.MarkCoveredByDeclarative()
		}
		return field.ErrorList{e}
	}
	var errs field.ErrorList
	if len(name) > 63 {
		e := field.TooLong(p, "", 63)
		if rule.has(sizeCovered) {
			e = e.WithOrigin("maxLength").MarkCoveredByDeclarative()
		}
		errs = append(errs, e)
	}
	for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(name)) {
		e := field.Invalid(p, name, msg)
		if rule.has(itemsCovered) {
			e = e.WithOrigin("format=k8s-long-name-caseless").MarkCoveredByDeclarative()
		}
		errs = append(errs, e)
	}
	return errs
}

// coveredDriverName is a driver name all of whose checks are declarative.
func coveredDriverName(name string, p *field.Path) field.ErrorList {
	return driverName(name, p, itemsCovered|sizeCovered)
}

func plainDriverName(name string, p *field.Path) field.ErrorList { return driverName(name, p, 0) }

// poolName: required, at most 253 characters, each "/"-separated part a
// DNS subdomain.
func poolName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if len(name) > resourcev1.PoolNameMaxLength {
		errs = append(errs, field.TooLong(p, "", resourcev1.PoolNameMaxLength).WithOrigin("format=k8s-resource-pool-name"))
	}
	for _, part := range strings.Split(name, "/") {
		errs = append(errs, dnsSubdomain(part, p).WithOrigin("format=k8s-resource-pool-name")...)
	}
	return errs
}

// uid: an RFC 4122 UUID in lowercase normal form.
func uid(s string, p *field.Path) field.ErrorList {
	var e *field.Error
	if err := uuid.Validate(s); err != nil {
		e = field.Invalid(p, s, fmt.Sprintf("error validating uid: %v", err))
	} else if len(s) != 36 || s != strings.ToLower(s) {
		e = field.Invalid(p, s, "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters")
	} else {
		return nil
	}
	return field.ErrorList{e.WithOrigin("format=k8s-uuid")}
}

// nodeName: a DNS subdomain, reported as an Invalid value without origin.
func nodeName(name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range apivalidation.NameIsDNSSubdomain(name, false) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

// attributeName: a C identifier, or a driver-name domain and a C
// identifier separated by "/" (more slashes pass, as upstream).
func attributeName(name resourcev1.QualifiedName, p *field.Path) field.ErrorList {
	parts := strings.Split(string(name), "/")
	switch len(parts) {
	case 1:
		return cIdentifier(parts[0], p)
	case 2:
		var errs field.ErrorList
		if parts[0] == "" {
			errs = append(errs, field.Invalid(p, "", "the domain must not be empty"))
		} else {
			errs = append(errs, plainDriverName(parts[0], p)...)
		}
		if parts[1] == "" {
			return append(errs, field.Invalid(p, "", "the name must not be empty"))
		}
		return append(errs, cIdentifier(parts[1], p)...)
	}
	return nil
}

// fullyQualifiedName: a qualified name with a domain.
func fullyQualifiedName(name resourcev1.FullyQualifiedName, p *field.Path) field.ErrorList {
	errs := attributeName(resourcev1.QualifiedName(name), p)
	if !strings.Contains(string(name), "/") {
		errs = append(errs, field.Invalid(p, name, "a fully qualified name must be a domain and a name separated by a slash"))
	}
	return errs.WithOrigin("format=k8s-resource-fully-qualified-name")
}

func cIdentifier(id string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(id) > resourcev1.DeviceMaxIDLength {
		errs = append(errs, field.TooLong(p, "", resourcev1.DeviceMaxIDLength))
	}
	for _, msg := range content.IsCIdentifier(id) {
		errs = append(errs, field.Invalid(p, id, msg))
	}
	return errs
}

// labelValue is a taint's or toleration's value.
func labelValue(v string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsValidLabelValue(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

// rawObject: parameters or device data are a JSON object of at most max
// bytes (stored ones may be larger).
func rawObject(raw runtime.RawExtension, p *field.Path, stored bool, max int) field.ErrorList {
	var v any
	switch {
	case len(raw.Raw) == 0:
		return field.ErrorList{field.Required(p, "")}
	case !stored && len(raw.Raw) > max:
		return field.ErrorList{field.TooLong(p, "", max)}
	}
	if err := json.Unmarshal(raw.Raw, &v); err != nil {
		return field.ErrorList{field.Invalid(p, "<value omitted>", fmt.Sprintf("error parsing data as JSON: %v", err.Error()))}
	}
	if v == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	if _, ok := v.(map[string]any); !ok {
		return field.ErrorList{field.Invalid(p, "<value omitted>", "must be a valid JSON object")}
	}
	return nil
}

var (
	taintEffects = []resourcev1.DeviceTaintEffect{resourcev1.DeviceTaintEffectNoExecute, resourcev1.DeviceTaintEffectNoSchedule,
		resourcev1.DeviceTaintEffectNone}
	tolerationOperators = []resourcev1.DeviceTolerationOperator{resourcev1.DeviceTolerationOpEqual, resourcev1.DeviceTolerationOpExists}
)

// deviceTaint: a label key, a label value when set, and (when new or
// changed) a known effect.
func deviceTaint(t resourcev1.DeviceTaint, old *resourcev1.DeviceTaint, p *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabelName(t.Key, p.Child("key"))
	if t.Value != "" {
		errs = append(errs, labelValue(t.Value, p.Child("value"))...)
	}
	if old != nil && old.Effect == t.Effect {
		return errs
	}
	switch {
	case t.Effect == "":
		errs = append(errs, field.Required(p.Child("effect"), "").MarkCoveredByDeclarative())
	case !slices.Contains(taintEffects, t.Effect):
		errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, taintEffects).MarkCoveredByDeclarative())
	}
	return errs
}

func deviceToleration(t resourcev1.DeviceToleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" {
		errs = append(errs, metav1validation.ValidateLabelName(t.Key, p.Child("key")).MarkCoveredByDeclarative()...)
	}
	switch t.Operator {
	case resourcev1.DeviceTolerationOpExists:
		if t.Value != "" {
			errs = append(errs, field.Invalid(p.Child("value"), t.Value, "must be empty for operator `Exists`"))
		}
	case resourcev1.DeviceTolerationOpEqual:
		errs = append(errs, labelValue(t.Value, p.Child("value"))...)
	case "":
		errs = append(errs, field.Required(p.Child("operator"), "").MarkCoveredByDeclarative())
	default:
		errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator, tolerationOperators).MarkCoveredByDeclarative())
	}
	if t.Effect != "" && !slices.Contains(taintEffects, t.Effect) {
		errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, taintEffects).MarkCoveredByDeclarative())
	}
	return errs
}

func tolerations(ts []resourcev1.DeviceToleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		errs = append(errs, deviceToleration(t, p.Index(i))...)
	}
	return errs
}

// bindingConditions: at most 4 of each kind, label names, no repeats, no
// overlap, and both or neither.
func bindingConditions(conds, failures []string, p *field.Path) field.ErrorList {
	cp, fp := p.Child("bindingConditions"), p.Child("bindingFailureConditions")
	labelName := func(s string, p *field.Path) field.ErrorList { return metav1validation.ValidateLabelName(s, p) }
	errs := eachItem(conds, resourcev1.BindingConditionsMaxSize, cp, sizeCovered, labelName)
	errs = append(errs, eachItem(failures, resourcev1.BindingFailureConditionsMaxSize, fp, sizeCovered, labelName)...)
	seen := map[string]bool{}
	for i, c := range conds {
		if seen[c] {
			errs = append(errs, field.Duplicate(cp.Index(i), c))
		}
		seen[c] = true
	}
	seenFailure := map[string]bool{}
	for i, c := range failures {
		if seenFailure[c] {
			errs = append(errs, field.Duplicate(fp.Index(i), c))
		}
		seenFailure[c] = true
		if slices.Contains(conds, c) {
			errs = append(errs, field.Invalid(fp.Index(i), c, "bindingFailureConditions must not overlap with bindingConditions"))
		}
	}
	if len(conds) == 0 && len(failures) > 0 {
		errs = append(errs, field.Invalid(cp, conds, "bindingConditions are required to use bindingFailureConditions"))
	}
	if len(failures) == 0 && len(conds) > 0 {
		errs = append(errs, field.Invalid(fp, failures, "bindingFailureConditions are required to use bindingConditions"))
	}
	return errs
}

// skipNodeOperations: preparing may be skipped only with unpreparing (or
// everything).
func skipNodeOperations(ops []resourcev1.SkipNodeOperation, p *field.Path) field.ErrorList {
	if slices.Contains(ops, resourcev1.SkipNodeOperationNodePrepareResources) &&
		!slices.Contains(ops, resourcev1.SkipNodeOperationNodeUnprepareResources) && !slices.Contains(ops, resourcev1.SkipNodeOperationAll) {
		return field.ErrorList{field.Invalid(p, ops, "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped")}
	}
	return nil
}

// longName is the declarative DNS subdomain rule, as upstream's handwritten
// class names use it.
func longName(name string, p *field.Path) field.ErrorList {
	return validate.LongName(context.Background(), operation.Operation{}, p, &name, nil)
}
