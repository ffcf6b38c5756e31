package registry

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	admissionregistrationv1alpha1 "k8s.io/api/admissionregistration/v1alpha1"
	admissionregistrationv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// jsonShape is the set of JSON paths of a Go type's fields (with their Go
// kinds), nested types expanded, so two types of the same shape convert
// field by field without loss.
func jsonShape(t reflect.Type, prefix string, seen map[reflect.Type]bool, out map[string]string) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		if t.Kind() == reflect.Map {
			out[prefix+"{}"] = t.Key().Kind().String()
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] || t.PkgPath() == "k8s.io/apimachinery/pkg/apis/meta/v1" {
		out[prefix] = t.Kind().String()
		return
	}
	seen[t] = true
	defer delete(seen, t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && f.Anonymous {
			jsonShape(f.Type, prefix, seen, out)
			continue
		}
		jsonShape(f.Type, prefix+"."+name, seen, out)
	}
}

// TestOptionalVersionsHaveStoredShape: every optional version's Go type has
// the fields of its stored version's, so convertFieldByField loses nothing.
func TestOptionalVersionsHaveStoredShape(t *testing.T) {
	for stored, versions := range optionalVersions {
		want := map[string]string{}
		obj, err := Scheme().New(stored)
		if err != nil {
			t.Fatal(err)
		}
		jsonShape(reflect.TypeOf(obj), "", map[reflect.Type]bool{}, want)
		for _, v := range versions {
			gvk := schema.GroupVersionKind{Group: stored.Group, Version: v, Kind: stored.Kind}
			other, err := Scheme().New(gvk)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			jsonShape(reflect.TypeOf(other), "", map[reflect.Type]bool{}, got)
			if !reflect.DeepEqual(got, want) {
				for p, k := range want {
					if got[p] != k {
						t.Errorf("%s: %s is %q, %s has %q", gvk, p, got[p], stored, k)
					}
				}
				for p := range got {
					if _, ok := want[p]; !ok {
						t.Errorf("%s: %s is not in %s", gvk, p, stored)
					}
				}
			}
		}
	}
}

func enablementOf(t *testing.T, value string) *APIEnablement {
	t.Helper()
	pairs := map[string]string{}
	ParseRuntimeConfigMap(pairs, value)
	e, err := NewAPIEnablement(pairs, RuntimeConfigOptions{PriorityAndFairness: true})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

var mapV1beta1 = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1beta1", Resource: "mutatingadmissionpolicies"}

// TestCatalogueOfRuntimeConfig: v1beta1 MutatingAdmissionPolicies are served
// only when turned on, with kube-apiserver 1.37.2's deprecation warning
// (recorded from it), after v1 in the group's versions.
func TestCatalogueOfRuntimeConfig(t *testing.T) {
	if _, ok := NewCatalogue().Lookup(mapV1beta1); ok {
		t.Errorf("default catalogue serves %s", mapV1beta1)
	}
	cat := NewCatalogueOf(enablementOf(t, "admissionregistration.k8s.io/v1beta1=true"))
	res, ok := cat.Lookup(mapV1beta1)
	if !ok {
		t.Fatalf("%s not served under admissionregistration.k8s.io/v1beta1=true", mapV1beta1)
	}
	const want = "admissionregistration.k8s.io/v1beta1 MutatingAdmissionPolicy is deprecated in v1.37+, unavailable in v1.40+; use admissionregistration.k8s.io/v1 MutatingAdmissionPolicy"
	if res.Deprecation != want {
		t.Errorf("Deprecation = %q, want %q", res.Deprecation, want)
	}
	if got := cat.Versions("admissionregistration.k8s.io"); !reflect.DeepEqual(got, []string{"v1", "v1beta1"}) {
		t.Errorf("Versions = %v, want [v1 v1beta1]", got)
	}
	only := NewCatalogueOf(enablementOf(t, "admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies=true,apps/v1/deployments=false"))
	if _, ok := only.Lookup(mapV1beta1); !ok {
		t.Errorf("%s not served when turned on alone", mapV1beta1)
	}
	if _, ok := only.Lookup(mapV1beta1.GroupVersion().WithResource("mutatingadmissionpolicybindings")); ok {
		t.Errorf("bindings served at v1beta1 though only policies were turned on")
	}
	if _, ok := only.Lookup(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}); ok {
		t.Errorf("apps/v1 deployments served though turned off")
	}
}

// TestOptionalVersionStrategy: a v1beta1 policy is defaulted and validated
// as v1 and stored as v1.
func TestOptionalVersionStrategy(t *testing.T) {
	cat := NewCatalogueOf(enablementOf(t, "api/beta=true"))
	res, _ := cat.Lookup(mapV1beta1)
	p := &admissionregistrationv1beta1.MutatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1beta1", Kind: "MutatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: admissionregistrationv1beta1.MutatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1beta1.MatchResources{},
			Mutations: []admissionregistrationv1beta1.Mutation{{PatchType: admissionregistrationv1beta1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionregistrationv1beta1.ApplyConfiguration{Expression: "Object{}"}}},
		},
	}
	res.Strategy.Default(p)
	if p.Spec.FailurePolicy == nil || *p.Spec.FailurePolicy != admissionregistrationv1beta1.Fail ||
		p.Spec.MatchConstraints.MatchPolicy == nil || *p.Spec.MatchConstraints.MatchPolicy != admissionregistrationv1beta1.Equivalent {
		t.Errorf("defaulted v1beta1 policy = %+v, want failurePolicy Fail and matchPolicy Equivalent", p.Spec)
	}
	errs := res.Strategy.Validate(p)
	if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), "spec.reinvocationPolicy") {
		t.Errorf("Validate(policy without reinvocationPolicy) = %v, want spec.reinvocationPolicy required", errs)
	}
	stored, err := ToStorageVersion(p)
	if err != nil {
		t.Fatal(err)
	}
	v1, ok := stored.(*admissionregistrationv1.MutatingAdmissionPolicy)
	if !ok || v1.Spec.Mutations[0].ApplyConfiguration.Expression != "Object{}" || v1.APIVersion != "admissionregistration.k8s.io/v1" {
		t.Errorf("ToStorageVersion = %#v, want the v1 policy", stored)
	}
}

// TestAlphaBindingParamRefDefault: a v1alpha1 binding's paramRef without
// parameterNotFoundAction gets Deny, as upstream's v1alpha1 defaults give
// it (v1 requires the field).
func TestAlphaBindingParamRefDefault(t *testing.T) {
	cat := NewCatalogueOf(enablementOf(t, "api/alpha=true"))
	res, ok := cat.Lookup(schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1alpha1", Resource: "mutatingadmissionpolicybindings"})
	if !ok {
		t.Fatal("v1alpha1 bindings not served under api/alpha=true")
	}
	b := &admissionregistrationv1alpha1.MutatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "b"},
		Spec: admissionregistrationv1alpha1.MutatingAdmissionPolicyBindingSpec{PolicyName: "p",
			ParamRef: &admissionregistrationv1alpha1.ParamRef{Name: "x"}},
	}
	res.Strategy.Default(b)
	if a := b.Spec.ParamRef.ParameterNotFoundAction; a == nil || *a != admissionregistrationv1alpha1.DenyAction {
		t.Errorf("parameterNotFoundAction = %v, want Deny", a)
	}
	if errs := res.Strategy.Validate(b); len(errs) != 0 {
		t.Errorf("Validate(defaulted v1alpha1 binding) = %v, want none", errs)
	}
}

// TestUnserved: of what api/all=true turns on, admitd names what it does
// not serve (LeaseCandidates, for one), and not what it serves.
func TestUnserved(t *testing.T) {
	e := enablementOf(t, "api/all=true")
	got := Unserved(e, NewCatalogueOf(e))
	if !slices.Contains(got, "coordination.k8s.io/v1beta1/leasecandidates") ||
		slices.Contains(got, "admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies") {
		t.Errorf("Unserved(api/all=true) = %v, want leasecandidates and no mutatingadmissionpolicies", got)
	}
	if got := Unserved(DefaultAPIEnablement(), NewCatalogue()); len(got) != 0 {
		t.Errorf("Unserved(defaults) = %v, want none", got)
	}
}
