package registry

import "testing"

// BenchmarkNewScheme is what building the registry's scheme costs a start.
func BenchmarkNewScheme(b *testing.B) {
	for b.Loop() {
		newScheme()
	}
}
