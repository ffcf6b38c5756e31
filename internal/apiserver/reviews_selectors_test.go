package apiserver

import (
	"encoding/json"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Every requirement of a review's selector is either kept or reported,
// never both and never lost; a raw selector that does not parse keeps
// nothing.
func FuzzReviewSelectors(f *testing.F) {
	f.Add("a=b,c!=d", "a", "In", "x", "y")
	f.Add("a in ((", "b", "NotIn", "x", "")
	f.Add("", "", "Exists", "", "")
	f.Add("x==", "k", "DoesNotExist", "v", "")
	f.Fuzz(func(t *testing.T, raw, key, op, v1, v2 string) {
		var values []string
		for _, v := range []string{v1, v2} {
			if v != "" {
				values = append(values, v)
			}
		}
		if fr, err := fieldRequirements(&authorizationv1.FieldSelectorAttributes{RawSelector: raw}); err != nil && fr != nil {
			t.Errorf("fieldRequirements(%q) = %v with error %v, want nothing", raw, fr, err)
		}
		if lr, err := labelRequirements(&authorizationv1.LabelSelectorAttributes{RawSelector: raw}); err != nil && lr != nil {
			t.Errorf("labelRequirements(%q) = %v with error %v, want nothing", raw, lr, err)
		}
		fieldReq := metav1.FieldSelectorRequirement{Key: key, Operator: metav1.FieldSelectorOperator(op), Values: values}
		fr, err := fieldRequirements(&authorizationv1.FieldSelectorAttributes{Requirements: []metav1.FieldSelectorRequirement{fieldReq, fieldReq}})
		if got := len(fr) + errorCount(err); got != 2 {
			t.Errorf("fieldRequirements(%+v twice) kept %d and reported %v, want 2 in all", fieldReq, len(fr), err)
		}
		labelReq := metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOperator(op), Values: values}
		lr, err := labelRequirements(&authorizationv1.LabelSelectorAttributes{Requirements: []metav1.LabelSelectorRequirement{labelReq, labelReq}})
		if got := len(lr) + errorCount(err); got != 2 {
			t.Errorf("labelRequirements(%+v twice) kept %d and reported %v, want 2 in all", labelReq, len(lr), err)
		}
	})
}

func errorCount(err error) int {
	if err == nil {
		return 0
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		return len(joined.Unwrap())
	}
	return 1
}

// Discovery lists the reviews with the one verb they have.
func TestReviewDiscoveryVerbs(t *testing.T) {
	ts := reviewServer(t, nil)
	for _, gv := range []string{"authorization.k8s.io/v1", "authentication.k8s.io/v1"} {
		var list metav1.APIResourceList
		w := ts.do("GET", "/apis/"+gv, "", "")
		if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil || w.Code != 200 {
			t.Fatalf("GET /apis/%s = %d %s", gv, w.Code, w.Body.String())
		}
		if len(list.APIResources) == 0 {
			t.Errorf("GET /apis/%s lists no resources", gv)
		}
		for _, r := range list.APIResources {
			if len(r.Verbs) != 1 || r.Verbs[0] != "create" {
				t.Errorf("discovery of %s/%s: verbs %v, want [create]", gv, r.Name, r.Verbs)
			}
		}
	}
}
