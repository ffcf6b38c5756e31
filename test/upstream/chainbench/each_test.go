package chainbench

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/admitd/admitd/pkg/admission/plugins/standard"
)

// BenchmarkEachPlugin is the breakdown of BenchmarkDefaultPluginsPodCreate:
// each compared plugin alone in a chain, admitd's beside upstream's, plus
// the copy of the pod each iteration admits (made outside the timer by
// admitEach, measured here on its own).
//
//	cd test/upstream && go test ./chainbench -run - -bench EachPlugin -benchmem -count 6
func BenchmarkEachPlugin(b *testing.B) {
	reg := standard.NewRegistry(standard.Options{})
	b.Run("copy/admitd", func(b *testing.B) {
		in := pod()
		b.ReportAllocs()
		for b.Loop() {
			_ = in.DeepCopy()
		}
	})
	b.Run("copy/upstream", func(b *testing.B) {
		var in api.Pod
		if err := legacyscheme.Scheme.Convert(pod(), &in, nil); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			_ = in.DeepCopy()
		}
	})
	for _, name := range comparedPlugins(b, reg) {
		b.Run(name+"/admitd", func(b *testing.B) {
			admitEach(b, pod(), (*corev1.Pod).DeepCopy, newAdmitdChain(b, reg, []string{name}))
		})
		b.Run(name+"/upstream", func(b *testing.B) {
			admit := newUpstreamChain(b, []string{name})
			in := new(api.Pod)
			if err := legacyscheme.Scheme.Convert(pod(), in, nil); err != nil {
				b.Fatal(err)
			}
			admitEach(b, in, (*api.Pod).DeepCopy, admit)
		})
	}
}
