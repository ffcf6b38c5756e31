package testenv

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkStart measures New (certificates, in-memory storage, bootstrap,
// listener) and, in "first-request", also a clientset and one request
// answered: what a test waits for before its first line runs.
func BenchmarkStart(b *testing.B) {
	b.Run("start", func(b *testing.B) {
		for b.Loop() {
			env, err := New()
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			_ = env.Close()
			b.StartTimer()
		}
	})
	b.Run("first-request", func(b *testing.B) {
		for b.Loop() {
			env, err := New()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := env.Client().CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			_ = env.Close()
			b.StartTimer()
		}
	})
}
