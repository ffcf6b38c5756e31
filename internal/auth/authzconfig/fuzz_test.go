package authzconfig

import "testing"

// FuzzDecode: decoding and validating never panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- {type: RBAC, name: rbac}\n"))
	f.Add([]byte(`{"apiVersion":"apiserver.config.k8s.io/v1beta1","kind":"AuthorizationConfiguration","authorizers":[{"type":"Webhook","name":"w","webhook":{}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if c, err := Decode(data); err == nil {
			_ = Validate(c)
		}
	})
}
