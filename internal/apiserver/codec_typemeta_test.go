package apiserver

import (
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/admitd/admitd/internal/registry"
)

// decodeJSON checks apiVersion and kind from the strict decode when it can;
// every body gets the answer checking the body first would give.
func TestDecodeJSONChecksTypeMetaAsTheBodySaysIt(t *testing.T) {
	cat := registry.NewCatalogue()
	res, _ := cat.Lookup(gvr("", "v1", "configmaps"))
	bodies := []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`,
		`{"metadata":{"name":"a"}}`,
		`{"kind":"ConfigMap"}`,
		`{"apiVersion":"v1"}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}}`,
		`{"apiVersion":"apps/v1","kind":"ConfigMap"}`,
		`{"apiVersion":"a/b/c","kind":"ConfigMap"}`,
		`{"apiVersion":"/v1","kind":"ConfigMap"}`,
		`{"apiVersion":"v1","KIND":"Pod"}`,
		`{"APIVERSION":"apps/v1","kind":"ConfigMap"}`,
		`{"Kind":"ConfigMap"}`,
		`{"kind":"Pod","kind":"ConfigMap"}`,
		`{"kind":"ConfigMap","kind":"Pod"}`,
		`{"kind":"Pod","spec":{}}`,
		`{"kind":"Pod","data":5}`,
		`{"kind":5}`,
		`{"kind":"ConfigMap","data":5}`,
		`{"kind":"ConfigMap",`,
		`not json`,
		`[]`,
		`null`,
	}
	for _, body := range bodies {
		obj, strict, err := decodeJSON(res, []byte(body))
		want := checkTypeMeta([]byte(body), res.GroupVersionKind())
		if want == nil {
			var wantStrict []error
			if _, wantStrict, want = decodeTyped(res, []byte(body)); want == nil && fmt.Sprint(strict) != fmt.Sprint(wantStrict) {
				t.Errorf("%s: strict errors %v, want %v", body, strict, wantStrict)
			}
		}
		if fmt.Sprint(err) != fmt.Sprint(want) {
			t.Errorf("%s: err %v, want %v", body, err, want)
		}
		if err == nil && obj.GetObjectKind().GroupVersionKind() != res.GroupVersionKind() {
			t.Errorf("%s: kind %v", body, obj.GetObjectKind().GroupVersionKind())
		}
	}
}

// decodeTyped is the strict decode alone, as decodeJSON did it after
// checking the body's apiVersion and kind.
func decodeTyped(res *registry.Resource, data []byte) (any, []error, error) {
	obj, err := registry.Scheme().New(res.GroupVersionKind())
	if err != nil {
		return nil, nil, err
	}
	strict, err := unmarshalStrict(data, obj)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	return obj, strict, nil
}
