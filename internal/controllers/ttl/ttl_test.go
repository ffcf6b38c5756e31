package ttl

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/controllers/controllertest"
)

// The TTL steps up past a boundary's top and down below its bottom, so a
// count between two overlapping boundaries keeps the one it has.
func TestSizeSteps(t *testing.T) {
	var s sizeStep
	ttl := func() int { return boundaries[s.step].ttlSeconds }
	for range 100 {
		s.added()
	}
	if ttl() != 0 {
		t.Fatalf("100 nodes: TTL %d, want 0", ttl())
	}
	s.added()
	if ttl() != 15 {
		t.Fatalf("101 nodes: TTL %d, want 15", ttl())
	}
	for range 11 {
		s.removed()
	}
	if ttl() != 15 {
		t.Fatalf("90 nodes after 101: TTL %d, want 15 (inside the overlap)", ttl())
	}
	s.removed()
	if ttl() != 0 {
		t.Fatalf("89 nodes: TTL %d, want 0", ttl())
	}
	for range 2000 {
		s.added()
	}
	if ttl() != 300 || s.step != len(boundaries)-1 {
		t.Fatalf("2089 nodes: TTL %d at step %d, want 300 at the last", ttl(), s.step)
	}
}

// Every Node gets node.alpha.kubernetes.io/ttl, a wrong value is put right.
func TestNodesAnnotated(t *testing.T) {
	s := controllertest.Start(t)
	c, err := New(Config{Store: s.Store, Catalogue: s.Catalogue, Client: s.Client(User), Log: s.Log})
	if err != nil {
		t.Fatal(err)
	}
	go c.Run(s.Ctx)
	for _, n := range []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b", Annotations: map[string]string{corev1.ObjectTTLAnnotationKey: "not a number", "keep": "me"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: map[string]string{corev1.ObjectTTLAnnotationKey: "30"}}},
	} {
		if _, err := s.Admin.CoreV1().Nodes().Create(s.Ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	controllertest.Eventually(t, 10*time.Second, "every node's TTL 0", func() (bool, string) {
		nodes, err := s.Admin.CoreV1().Nodes().List(s.Ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, n := range nodes.Items {
			if n.Annotations[corev1.ObjectTTLAnnotationKey] != "0" {
				return false, n.Name + " has " + n.Annotations[corev1.ObjectTTLAnnotationKey]
			}
			if n.Name == "b" && n.Annotations["keep"] != "me" {
				return false, "b lost its other annotation"
			}
		}
		return len(nodes.Items) == 3, "nodes missing"
	})
}
