package evaluate

import (
	"context"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// csrPEM is a CSR request (CN alice, O devs), base64.
const csrPEM = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIWk1JR0JBZ0VBTUI4eERUQUxCZ05WQkFvTUJHUmxkbk14RGpBTUJnTlZCQU1NQldGc2FXTmxNRmt3RXdZSApLb1pJemowQ0FRWUlLb1pJemowREFRY0RRZ0FFbkw2SlhTcGFXc003V0hhM3VCV0oydWNkYktDZC9sUDBtWjErCmVRbGh4UlB0V3RydEVNT2RqNnorVE84V25ab3ZIeEVHRzJ1N2cxSnE1NEpBWnZwT2ZhQUFNQW9HQ0NxR1NNNDkKQkFNQ0EwY0FNRVFDSUFESE04L250WHh0VnVlMzBMdUc2WStVSlE2b1R4Kzk5Z1hGbTlEbmgrOFdBaUFNNDZRWgpvRjFjODBhWWUwNTkrTU1nZjlia1J3Y05kRnRkZ05uRHowRVJodz09Ci0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo="

func csr(spec map[string]any) *unstructured.Unstructured {
	s := map[string]any{"request": csrPEM, "signerName": "kubernetes.io/kube-apiserver-client", "usages": []any{"client auth"}}
	for k, v := range spec {
		s[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
		"metadata": map[string]any{"name": "c1"}, "spec": s}}
}

func TestRunKeepsTheRequesterOfAGivenCSR(t *testing.T) {
	requester := map[string]any{"username": "alice", "uid": "alice-uid", "groups": []any{"devs", "system:authenticated"},
		"extra": map[string]any{"example.com/team": []any{"a"}}}
	update := csr(nil)
	update.SetLabels(map[string]string{"seen": "yes"})
	r, err := Run(context.Background(), Input{Objects: []Object{{Unstructured: csr(requester), Source: "csr"}},
		Request: Request{Operation: Update, Object: update}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Allowed {
		t.Fatalf("Run(UPDATE of a CSR) = %s %+v, want allowed", r.Decision, r.Status)
	}
	spec := r.Object["spec"].(map[string]any)
	for k, want := range requester {
		if !reflect.DeepEqual(spec[k], want) {
			t.Errorf("final spec.%s = %v, want the requester's %v", k, spec[k], want)
		}
	}
}
