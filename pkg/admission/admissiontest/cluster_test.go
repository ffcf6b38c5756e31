package admissiontest

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func TestCluster(t *testing.T) {
	ctx := context.Background()
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	c := NewCluster(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p2", Labels: map[string]string{"x": "1"}}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p1"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "p0"}},
	)
	if ns, err := c.GetNamespace(ctx, "a"); err != nil || ns.Name != "a" {
		t.Fatalf("GetNamespace(a) = %v, %v", ns, err)
	}
	if _, err := c.GetNamespace(ctx, "zz"); !apierrors.IsNotFound(err) {
		t.Fatalf("GetNamespace(zz) error = %v, want NotFound", err)
	}
	all, _ := c.ListCachedObjects(ctx, pods, "a", nil)
	if len(all) != 2 || all[0].(*corev1.Pod).Name != "p1" {
		t.Fatalf("List(a) = %v, want p1, p2", all)
	}
	sel, _ := c.ListCachedObjects(ctx, pods, "", labels.SelectorFromSet(labels.Set{"x": "1"}))
	if len(sel) != 1 || sel[0].(*corev1.Pod).Name != "p2" {
		t.Fatalf("List(x=1) = %v, want p2", sel)
	}
	if every, _ := c.ListCachedObjects(ctx, pods, "", nil); len(every) != 3 {
		t.Fatalf("List(all) = %d pods, want 3", len(every))
	}
	nss := corev1.SchemeGroupVersion.WithResource("namespaces")
	if err := c.CreateObject(ctx, nss, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("CreateObject(a) error = %v, want AlreadyExists", err)
	}
	if err := c.CreateObject(ctx, nss, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "new"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetCachedObject(ctx, nss, "", "new"); err != nil {
		t.Fatalf("created namespace not found: %v", err)
	}
}

// TestClusterListsWhatWasAddedSince: a list after an Add, a create or a
// status update shows the cluster as it is now, in order.
func TestClusterListsWhatWasAddedSince(t *testing.T) {
	ctx := context.Background()
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	c := NewCluster(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p2"}})
	names := func() string {
		objs, _ := c.ListCachedObjects(ctx, pods, "a", nil)
		s := ""
		for _, o := range objs {
			p := o.(*corev1.Pod)
			s += p.Name + ":" + p.ResourceVersion + " "
		}
		return s
	}
	if got := names(); got != "p2: " {
		t.Fatalf("first list = %q", got)
	}
	c.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p1", ResourceVersion: "1"}})
	if err := c.CreateObject(ctx, pods, "a", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p3"}}); err != nil {
		t.Fatal(err)
	}
	if got := names(); got != "p1:1 p2: p3: " {
		t.Fatalf("list after an Add and a create = %q", got)
	}
	if _, err := c.UpdateObjectStatus(ctx, pods, "a", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p1", ResourceVersion: "1"}}); err != nil {
		t.Fatal(err)
	}
	c.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p3", ResourceVersion: "7"}})
	if got := names(); got != "p1:2 p2: p3:7 " {
		t.Fatalf("list after a status update and a replacement = %q", got)
	}
}
