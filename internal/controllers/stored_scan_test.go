package controllers

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"
)

// decodeStored reads what the case-sensitive decoder reads, for any valid
// JSON.
func FuzzDecodeStoredIsTheDecoder(f *testing.F) {
	now := metav1.NewTime(time.Unix(1700000000, 0))
	yes := true
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{
		Name: "p", Namespace: "ns", UID: "u-1", Finalizers: []string{"a/b", "foregroundDeletion"}, DeletionTimestamp: &now,
		Labels: map[string]string{"uid": "x", "name": `"}{`}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:name":{}}}`)}}},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u-0", BlockOwnerDeletion: &yes}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	encoded, _ := json.Marshal(pod)
	ns, _ := json.Marshal(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "u"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}})
	for _, seed := range []string{
		string(encoded), string(ns), `null`, `{}`, `[]`, `"x"`, `{"metadata":null}`, `{"metadata":"x"}`, `{"metadata":{"name":null}}`,
		`{"metadata":{"Name":"a"}}`, `{"Metadata":{"name":"a"}}`, `{"metadata":{"name":"a","name":"b"}}`, `{"metadata":{"n\u0061me":"a"}}`,
		`{"metadata":{"ownerReferences":[{"uid":"1"}],"ownerReferences":[{"uid":"2"},{"uid":"3"}]}}`, `{"metadata":{"ownerReferences":null}}`,
		`{"metadata":{"deletionTimestamp":null}}`, `{"metadata":{"deletionTimestamp":"bad"}}`, `{"metadata":{"uid":5}}`,
		`{"status":{"phase":"Active"}}`, `{"status":{"phase":5}}`, `{"status":{"PHASE":"x"}}`, `{"status":[]}`,
		` { "metadata" : { "name" : "a" , "x" : [ 1 , { "y" : "]}" } ] } } `, `{"spec":{"a":[[[{}]]],"b":"\"}"},"metadata":{"uid":"u"}}`,
		`{"metadata":{"finalizers":["a"],"finalizers":[]}}`, `{"a":1e5,"b":-0.5,"c":true,"d":false,"metadata":{"uid":"\u00e9"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		if !json.Valid(value) {
			return // storage holds only JSON the server encoded
		}
		var want stored
		wantErr := sigsjson.UnmarshalCaseSensitivePreserveInts(value, &want)
		got, err := decodeStored(value)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("decodeStored(%s) error = %v, the decoder's = %v", value, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(*got, want) {
			t.Fatalf("decodeStored(%s) =\n %+v\ndecoder:\n %+v", value, *got, want)
		}
	})
}

// A custom resource may keep a top-level "Metadata" of its own; the
// collector reads only metadata, as upstream's metadata informers do.
func TestDecodeStoredReadsOnlyMetadata(t *testing.T) {
	s, err := decodeStored([]byte(`{"Metadata":{"ownerReferences":[{"uid":"x"}],"finalizers":["orphan"],"deletionTimestamp":"2026-01-01T00:00:00Z"},"metadata":{"name":"a","uid":"u"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if m := s.Metadata; m.Name != "a" || m.UID != "u" || m.OwnerReferences != nil || m.Finalizers != nil || m.DeletionTimestamp != nil {
		t.Errorf("decodeStored took fields from \"Metadata\": %+v", m)
	}
}
