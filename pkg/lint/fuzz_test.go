package lint

import (
	"context"
	"os"
	"strings"
	"testing"
)

// FuzzDecode feeds arbitrary documents to Decode and lints what it
// accepts: neither may panic.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"AL001-kube-system.yaml", "AL007-timeouts.yaml", "AL023-paramkind-mismatch.yaml", "AL008-side-effects.yaml"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add(`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}]}`)
	f.Fuzz(func(t *testing.T, doc string) {
		s := &Set{}
		if err := s.Decode(strings.NewReader(doc), "fuzz"); err != nil {
			return
		}
		Run(context.Background(), s, Options{})
	})
}
