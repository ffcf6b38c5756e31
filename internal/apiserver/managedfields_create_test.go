package apiserver

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
)

// createBodies are creates whose recorded fields differ in ways a cache
// keyed too loosely would confuse: values that are list keys, set members,
// fields equal to the empty object's, client-sent managedFields.
var createBodies = []struct {
	gvr  schema.GroupVersionResource
	body string
}{
	{gvr("", "v1", "configmaps"), `{"metadata":{"name":"a"},"data":{"k":"v"}}`},
	{gvr("", "v1", "configmaps"), `{"metadata":{"name":"a"},"data":{"k":"other"}}`},
	{gvr("", "v1", "configmaps"), `{"metadata":{"name":"a"},"data":{"k2":"v"}}`},
	{gvr("", "v1", "configmaps"), `{"metadata":{"name":"a","labels":{"app":"x"}}}`},
	{gvr("", "v1", "configmaps"), `{"metadata":{"name":"a","generateName":"a-"}}`},
	{gvr("", "v1", "configmaps"), `{"metadata":{"name":"a"}}`},
	{gvr("", "v1", "configmaps"), `{"metadata":{"name":"a","uid":"u1","resourceVersion":"","generation":3}}`},
	{gvr("", "v1", "configmaps"), `{"metadata":{"name":"a","ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"1"}]}}`},
	{gvr("", "v1", "configmaps"), `{"metadata":{"name":"a","ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"2"}]}}`},
	{gvr("", "v1", "configmaps"), `{"metadata":{"name":"a","finalizers":["x/y"]}}`},
	{gvr("", "v1", "configmaps"), `{"metadata":{"name":"a","finalizers":["x/z"]}}`},
	{gvr("", "v1", "configmaps"), `{"metadata":{"name":"a","managedFields":[{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{}}}]},"data":{"k":"v"}}`},
	{gvr("", "v1", "services"), `{"metadata":{"name":"s"},"spec":{"ports":[{"port":80}]}}`},
	{gvr("", "v1", "services"), `{"metadata":{"name":"s"},"spec":{"ports":[{"port":81}]}}`},
	{gvr("", "v1", "services"), `{"metadata":{"name":"s"},"spec":{"ports":[{"port":80,"protocol":"UDP"}]}}`},
	{gvr("", "v1", "pods"), `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}`},
	{gvr("", "v1", "pods"), `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"d","image":"i"}]}}`},
	{gvr("", "v1", "pods"), `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}]}]}}`},
	{gvr("", "v1", "pods"), `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]},"status":{"phase":"Running"}}`},
	{gvr("apps", "v1", "deployments"), `{"metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`},
	{gvr("apps", "v1", "deployments"), `{"metadata":{"name":"d"},"spec":{"replicas":0,"paused":false,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`},
	{gvr("", "v1", "namespaces"), `{"metadata":{"name":"n"}}`},
	{gvr("", "v1", "namespaces"), `{"metadata":{"name":"n"},"spec":{"finalizers":["kubernetes","x/y"]}}`},
}

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

// What createdFields records is what the field manager records, whether
// it comes from the cache or not, for each body after every other body of
// its resource has been cached under other names.
func TestCreatedFieldsRecordWhatTheFieldManagerRecords(t *testing.T) {
	cat := registry.NewCatalogue()
	f := newFieldManagers(nil)
	defaulted := func(res *registry.Resource, body string, name string) runtime.Object {
		obj, _, err := decodeObject(res, mediaJSON, []byte(body))
		if err != nil {
			t.Fatalf("decode %s: %v", body, err)
		}
		m := accessor(obj)
		m.SetName(name)
		m.SetNamespace("ns-" + name)
		m.SetUID(types.UID("uid-" + name))
		m.SetCreationTimestamp(metav1.Now())
		if res.Strategy.Default != nil {
			res.Strategy.Default(obj)
		}
		return obj
	}
	for round := range 2 {
		for i, c := range createBodies {
			res, ok := cat.Lookup(c.gvr)
			if !ok {
				t.Fatalf("no resource %v", c.gvr)
			}
			e, err := f.entry(res, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, manager := range []string{"m1", "m2"} {
				name := fmt.Sprintf("obj-%d-%d", round, i)
				empty, _ := layout.NewObject(res)
				want := e.fm.UpdateNoErrors(empty, defaulted(res, c.body, name), manager)
				empty, _ = layout.NewObject(res)
				got := e.created.record(e.fm, empty, defaulted(res, c.body, name), manager)
				if g, w := withoutTimes(accessor(got).GetManagedFields()), withoutTimes(accessor(want).GetManagedFields()); !reflect.DeepEqual(g, w) {
					t.Errorf("round %d, %s as %s:\n got %s\nwant %s", round, c.body, manager, g, w)
				}
				for _, entry := range accessor(got).GetManagedFields() {
					if entry.Time == nil || entry.Time.IsZero() {
						t.Errorf("round %d, %s: entry without a time: %+v", round, c.body, entry)
					}
				}
				if accessor(got).GetName() != name || accessor(got).GetUID() != types.UID("uid-"+name) {
					t.Errorf("record changed the object's metadata: %s %s", accessor(got).GetName(), accessor(got).GetUID())
				}
			}
		}
	}
}

func withoutTimes(entries []metav1.ManagedFieldsEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, fmt.Sprintf("%s/%s/%s/%s/%s", e.Manager, e.Operation, e.APIVersion, e.Subresource, e.FieldsV1))
	}
	return out
}

// A remembered entry is the cache's own: changing what a create returned
// does not change what the next create gets.
func TestCreatedFieldsHandOutCopies(t *testing.T) {
	cat := registry.NewCatalogue()
	f := newFieldManagers(nil)
	res, _ := cat.Lookup(gvr("", "v1", "configmaps"))
	e, _ := f.entry(res, "")
	create := func() []metav1.ManagedFieldsEntry {
		obj, _, _ := decodeObject(res, mediaJSON, []byte(`{"metadata":{"name":"a"},"data":{"k":"v"}}`))
		empty, _ := layout.NewObject(res)
		return accessor(e.created.record(e.fm, empty, obj, "m")).GetManagedFields()
	}
	first := create()
	first[0].Manager, first[0].FieldsV1.Raw[0] = "changed", 'X'
	second := create()
	third := create()
	if !reflect.DeepEqual(withoutTimes(second), withoutTimes(third)) || second[0].Manager != "m" || second[0].FieldsV1.Raw[0] != '{' {
		t.Errorf("the cache handed out its own entries: %s then %s", withoutTimes(second), withoutTimes(third))
	}
}

// encoding/json writes every invalid UTF-8 byte as \ufffd, where the field
// manager keeps the bytes (a protobuf body can carry them): such objects
// are never taken for one another.
func TestCreatedFieldsTellInvalidUTF8Apart(t *testing.T) {
	cat := registry.NewCatalogue()
	f := newFieldManagers(nil)
	res, _ := cat.Lookup(gvr("", "v1", "configmaps"))
	e, _ := f.entry(res, "")
	for _, key := range []string{"a\xff", "a\xfe", "a\xff"} {
		obj := func() *corev1.ConfigMap {
			return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{key: "v"}}
		}
		empty, _ := layout.NewObject(res)
		want := e.fm.UpdateNoErrors(empty, obj(), "m")
		empty, _ = layout.NewObject(res)
		got := e.created.record(e.fm, empty, obj(), "m")
		if g, w := withoutTimes(accessor(got).GetManagedFields()), withoutTimes(accessor(want).GetManagedFields()); !reflect.DeepEqual(g, w) {
			t.Errorf("key %q:\n got %q\nwant %q", key, g, w)
		}
	}
}
