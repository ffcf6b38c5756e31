package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// bootstrapFieldKinds are the kinds of the objects a fresh server writes
// itself.
var bootstrapFieldKinds = []schema.GroupVersionResource{
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "flowschemas"},
	{Version: "v1", Resource: "namespaces"},
	{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "prioritylevelconfigurations"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
}

// preAggregated are the roles admitd writes with the rules that
// kube-controller-manager's aggregation controller gives them later
// upstream: kube-apiserver's entry there holds no rules.
var preAggregated = []string{"clusterroles /admin", "clusterroles /edit", "clusterroles /view"}

// The managedFields of the objects a fresh server writes itself (system
// namespaces, RBAC policy, priority classes, flow-control configuration
// with its status applied) are kube-apiserver's (testdata: recorded from
// the real kube-apiserver 1.37.2 started with default flags, one line per
// entry: resource, namespace/name, manager, operation, subresource,
// apiVersion, fields); the pre-aggregated roles' entries hold their rules
// too.
func TestBootstrapManagedFieldsAreUpstreams(t *testing.T) {
	recorded, err := os.ReadFile(filepath.Join("testdata", "bootstrap-managedfields-kube-apiserver-1.37.2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSpace(string(recorded)), "\n")
	_, admin := startWith(t, testOptions(t))
	client := dynamic.NewForConfigOrDie(admin)
	var got []string
	eventually(t, "the bootstrap objects' managedFields", func() (bool, string) {
		got = managedFieldLines(t, client)
		return slices.Equal(got, want), fmt.Sprintf("%d lines, want %d", len(got), len(want))
	})
}

func managedFieldLines(t *testing.T, client dynamic.Interface) []string {
	t.Helper()
	var lines []string
	for _, gvr := range bootstrapFieldKinds {
		list, err := client.Resource(gvr).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range list.Items {
			object := gvr.Resource + " " + item.GetNamespace() + "/" + item.GetName()
			for _, e := range item.GetManagedFields() {
				fields := compactFields(t, e.FieldsV1)
				if slices.Contains(preAggregated, object) && e.Manager == "kube-apiserver" {
					fields = strings.Replace(fields, `,"f:rules":{}`, "", 1)
				}
				lines = append(lines, strings.Join([]string{object, e.Manager, string(e.Operation), e.Subresource, e.APIVersion, fields}, " "))
			}
		}
	}
	slices.Sort(lines)
	return lines
}

// compactFields is a FieldsV1 as compact JSON with sorted keys.
func compactFields(t *testing.T, f *metav1.FieldsV1) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(f.Raw, &v); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(b.String())
}
