// Package printercolumns compares the Table columns admitd gives a list of
// every built-in resource it serves with kube-apiserver 1.37.2's printers
// (pkg/printers/internalversion, wide, as its table convertor asks; the
// default Name and Created At for a kind without one): names, types,
// formats, priorities and descriptions.
package printercolumns

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/printers"
	printersinternal "k8s.io/kubernetes/pkg/printers/internalversion"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage/memory"
	"github.com/admitd/admitd/test/upstream/internal/legacyinstall"
)

var objectMetaDoc = metav1.ObjectMeta{}.SwaggerDoc()

// defaultColumns are upstream's default table convertor's.
var defaultColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc["name"]},
	{Name: "Created At", Type: "date", Description: objectMetaDoc["creationTimestamp"]},
}

func TestPrinterColumnsLikeUpstream(t *testing.T) {
	cat := registry.NewCatalogue()
	api := apiserver.New(apiserver.Config{Store: memory.New(), Catalogue: cat, Admission: admission.NewChain()})
	if err := api.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	generator := printers.NewTableGenerator().With(printersinternal.AddHandlers)
	compared := 0
	for _, res := range cat.Resources() {
		if res.Unstructured || !res.HasVerb("list") || slices.Contains(legacyinstall.OwnSchemes, res.Group) {
			continue
		}
		want := upstreamColumns(t, generator, res)
		got := ourColumns(t, api, res)
		if !slices.Equal(got, want) {
			t.Errorf("%s columns differ from upstream's:%s", res.GroupVersionResource, columnDiff(got, want))
		}
		compared++
	}
	t.Logf("%d resources compared", compared)
	if compared < 50 {
		t.Errorf("only %d resources: the catalogue no longer lists the built-in resources", compared)
	}
}

func upstreamColumns(t *testing.T, generator *printers.HumanReadableGenerator, res *registry.Resource) []metav1.TableColumnDefinition {
	t.Helper()
	list, err := legacyscheme.Scheme.New(schema.GroupVersionKind{Group: res.Group, Version: runtime.APIVersionInternal, Kind: res.ListKind})
	if err != nil {
		t.Fatalf("%s: %v", res.GroupVersionResource, err)
	}
	table, err := generator.GenerateTable(list, printers.GenerateOptions{Wide: true})
	if err != nil {
		return defaultColumns // no printer: the default convertor
	}
	return table.ColumnDefinitions
}

func ourColumns(t *testing.T, api http.Handler, res *registry.Resource) []metav1.TableColumnDefinition {
	t.Helper()
	path := "/apis/" + res.Group + "/" + res.Version
	if res.Group == "" {
		path = "/api/" + res.Version
	}
	r := httptest.NewRequest(http.MethodGet, path+"/"+res.Resource+"?limit=1", nil)
	r.Header.Set("Accept", "application/json;as=Table;g=meta.k8s.io;v=v1")
	w := httptest.NewRecorder()
	api.ServeHTTP(w, r)
	var table metav1.Table
	if err := json.Unmarshal(w.Body.Bytes(), &table); err != nil || w.Code != http.StatusOK {
		t.Fatalf("%s as a Table: %d %s", res.GroupVersionResource, w.Code, w.Body)
	}
	return table.ColumnDefinitions
}

// columnDiff describes how ours differs from upstream's, column by column.
func columnDiff(ours, upstream []metav1.TableColumnDefinition) string {
	out := ""
	for i := range max(len(ours), len(upstream)) {
		var o, u metav1.TableColumnDefinition
		if i < len(ours) {
			o = ours[i]
		}
		if i < len(upstream) {
			u = upstream[i]
		}
		if o != u {
			out += fmt.Sprintf("\n  column %d: ours %q %s %s %d %.70q\n            upstream %q %s %s %d %.70q", i, o.Name, o.Type, o.Format, o.Priority, o.Description, u.Name, u.Type, u.Format, u.Priority, u.Description)
		}
	}
	return out
}
