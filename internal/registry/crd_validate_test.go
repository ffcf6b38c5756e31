package registry

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

func loadCRD(t *testing.T, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "crdvalidation", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

func createCRDErrors(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	t.Helper()
	r, ok := testCatalogue.Lookup(CRDResource)
	if !ok {
		t.Fatal("no CRD resource in the catalogue")
	}
	PrepareForCreate(r, crd)
	return r.ValidateNew(crd)
}

// TestCRDValidationAnswersAsUpstream: each definition of testdata/crdvalidation
// was sent to the real kube-apiserver 1.37.2; want are the errors it answered
// (field: detail, in its order where the order is stable).
func TestCRDValidationAnswersAsUpstream(t *testing.T) {
	costDetail := "estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
	rule := "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
	cases := map[string][]string{
		"noschema": {"spec.versions[0].schema.openAPIV3Schema: Required value"},
		"badname":  {`metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group`},
		"cost": {
			rule + ": Forbidden: " + costDetail,
			rule + ": Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
			"spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
		},
		"nocompile":     {rule + `: Invalid value: {"Rule":"self.nosuch \u003e 1","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ERROR: <input>:1:5: undefined field 'nosuch'` + "\n | self.nosuch > 1\n | ....^"},
		"nonstructural": {"spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"},
		"format":        nil,
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, e := range createCRDErrors(t, loadCRD(t, name)) {
				got = append(got, e.Error())
			}
			if !slices.Equal(got, want) {
				t.Errorf("errors:\n got %q\nwant %q", got, want)
			}
		})
	}
}

func TestCRDWarningsAsUpstream(t *testing.T) {
	crd := loadCRD(t, "format")
	r, _ := testCatalogue.Lookup(CRDResource)
	want := []string{`unrecognized format "bogus"`,
		`x-kubernetes-list-type: set for items of type "object" is not supported by server-side apply or CEL validation rules`}
	if got := r.Warnings(crd, nil); !slices.Equal(got, want) {
		t.Errorf("create warnings %q, want %q", got, want)
	}
	if got := r.Warnings(crd, crd.DeepCopy()); len(got) != 0 {
		t.Errorf("an update that adds nothing warned %q", got)
	}
}

// TestCRDUpdateValidation: an update is checked too: a rule made too costly
// is refused, a change elsewhere passes.
func TestCRDUpdateValidation(t *testing.T) {
	r, _ := testCatalogue.Lookup(CRDResource)
	old := loadCRD(t, "format")
	PrepareForCreate(r, old)
	if errs := r.ValidateNew(old); len(errs) != 0 {
		t.Fatalf("valid definition refused: %v", errs)
	}
	old.ResourceVersion = "7"
	costly := loadCRD(t, "cost")
	updated := old.DeepCopy()
	updated.Spec.Versions[0].Schema = costly.Spec.Versions[0].Schema
	if errs := r.ValidateChange(updated, old); !strings.Contains(errs.ToAggregate().Error(), "estimated rule cost exceeds budget") {
		t.Errorf("a costly rule added by an update: %v", errs)
	}
	relabelled := old.DeepCopy()
	relabelled.Spec.Names.ShortNames = []string{"wd"}
	if errs := r.ValidateChange(relabelled, old); len(errs) != 0 {
		t.Errorf("an update of the short names was refused: %v", errs)
	}
}
