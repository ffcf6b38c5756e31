package apiserver

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// createdResponse gives what encoding/json's Encoder writes for the
// object with its resourceVersion, whatever else the object holds.
func TestCreatedResponseIsTheEncodedObject(t *testing.T) {
	const uid = types.UID("0b7c2a1e-5d3f-4e8a-9c61-2f4d8e7a9b10")
	tricky := []string{"", "v", `"uid":"` + string(uid) + `"`, `","uid":"x`, `\"uid\"`, "<>&", "é\u2028", "\xff\xfe", `"resourceVersion"`, "}", `{"uid":"` + string(uid) + `"}`}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func() string { return tricky[rng.IntN(len(tricky))] }
	var objects []runtime.Object
	for range 300 {
		meta := metav1.ObjectMeta{Name: "n", Namespace: "ns", UID: uid, Generation: int64(rng.IntN(3)),
			CreationTimestamp: metav1.Unix(int64(rng.IntN(1e9)), 0), GenerateName: pick(),
			Labels: map[string]string{"a": pick()}, Annotations: map[string]string{pick(): pick()}}
		if rng.IntN(2) == 0 {
			meta.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pick(), UID: uid}}
		}
		objects = append(objects,
			&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta, Data: map[string]string{pick(): pick()}},
			&appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: meta,
				Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{UID: uid, Labels: map[string]string{"a": pick()}}}}})
	}
	for _, obj := range objects {
		m := accessor(obj)
		m.SetResourceVersion("")
		stored, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		rv := rng.Int64N(1 << 40)
		m.SetResourceVersion(strconv.FormatInt(rv, 10))
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(obj); err != nil {
			t.Fatal(err)
		}
		got, ok := createdResponse(stored, uid, rv)
		if !ok {
			t.Fatalf("createdResponse(%s) did not apply", stored)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("createdResponse:\n got %s\nwant %s", got, want.Bytes())
		}
	}
}

// Where it cannot tell where the field goes, it says so.
func TestCreatedResponseDeclines(t *testing.T) {
	for _, c := range []struct {
		stored string
		uid    types.UID
	}{
		{`{"metadata":{"name":"a"}}`, "u1"},
		{`{"metadata":{"name":"a","uid":"u1"}}`, ""},
		{`{"metadata":{"name":"a","uid":"u\"1"}}`, `u"1`},
		{`{"metadata":{"name":"a","uid":"u1","resourceVersion":"3"}}`, "u1"},
		{`{"metadata":{"name":"a","uid":"u2"}}`, "u1"},
	} {
		if got, ok := createdResponse([]byte(c.stored), c.uid, 7); ok {
			t.Errorf("createdResponse(%s, %q) = %s, want it to decline", c.stored, c.uid, got)
		}
	}
}
