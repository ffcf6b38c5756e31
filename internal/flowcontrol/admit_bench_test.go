package flowcontrol

import (
	"context"
	"testing"
	"time"
)

// BenchmarkAdmitRelease is one request's classification, estimate, seat and
// release: an exempt one (system:masters) and a limited one.
func BenchmarkAdmitRelease(b *testing.B) {
	c := bootstrapController(&testing.T{}, time.Now)
	one := func(Classification, int) Estimate { return Estimate{Seats: 1} }
	for _, bc := range []struct {
		name string
		d    *Digest
	}{
		{"exempt", &Digest{User: "admin", Groups: []string{"system:masters", "system:authenticated"}, IsResource: true, Verb: "create", Resource: "configmaps", Namespace: "a"}},
		{"limited", &Digest{User: "alice", Groups: []string{"system:authenticated"}, IsResource: true, Verb: "create", Resource: "configmaps", Namespace: "a"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				a, r := c.Admit(context.Background(), bc.d, time.Minute, one)
				if r != nil {
					b.Fatal(r)
				}
				a.Release()
			}
		})
	}
}
