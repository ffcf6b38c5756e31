package namespacelifecycle

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

type namespaces map[string]corev1.NamespacePhase

func (n namespaces) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	phase, ok := n[name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: phase}}, nil
}

func configMap(ns string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: ns}}
}

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// terminatingCause checks the NamespaceTerminating cause clients look for.
func terminatingCause(t *testing.T, _ *admission.Attributes, err error) {
	se, ok := err.(*apierrors.StatusError)
	if !ok || se.ErrStatus.Details == nil || len(se.ErrStatus.Details.Causes) != 1 || se.ErrStatus.Details.Causes[0].Type != corev1.NamespaceTerminatingCause {
		t.Errorf("error = %#v, want one NamespaceTerminating cause", err)
	}
}

func TestAdmit(t *testing.T) {
	p := New(namespaces{"live": corev1.NamespaceActive, "dying": corev1.NamespaceTerminating})
	admissiontest.Run(t, p, []admissiontest.Case{
		{Name: "create in active namespace", Attributes: admissiontest.Create(configMap("live")).Attributes()},
		{Name: "create in missing namespace", Attributes: admissiontest.Create(configMap("gone")).Attributes(),
			WantErr: `namespaces "gone" not found`, WantCode: 404},
		{Name: "create in terminating namespace", Attributes: admissiontest.Create(configMap("dying")).Attributes(),
			WantErr: `configmaps "c" is forbidden: unable to create new content in namespace dying because it is being terminated`, WantCode: 403,
			Check: terminatingCause},
		{Name: "update in terminating namespace", Attributes: admissiontest.Update(configMap("dying"), configMap("dying")).Attributes()},
		{Name: "delete in missing namespace", Attributes: admissiontest.Delete(configMap("gone")).Attributes()},
		{Name: "delete kube-system", Attributes: admissiontest.Delete(namespace("kube-system")).Attributes(),
			WantErr: `namespaces "kube-system" is forbidden: this namespace may not be deleted`, WantCode: 403},
		{Name: "delete other namespace", Attributes: admissiontest.Delete(namespace("live")).Attributes()},
		{Name: "create namespace", Attributes: admissiontest.Create(namespace("new")).Attributes()},
	})
}

// laggingNamespaces is a cache that still shows every namespace Active
// while storage (GetNamespaceLive) already has some Terminating.
type laggingNamespaces struct {
	namespaces
	stored    namespaces
	liveReads int
}

func (l *laggingNamespaces) GetNamespaceLive(ctx context.Context, name string) (*corev1.Namespace, error) {
	l.liveReads++
	return l.stored.GetNamespace(ctx, name)
}

// TestRecentDeletionReadsStorage: once the plugin has admitted a
// namespace's deletion, a create there is checked against storage (which
// says Terminating) rather than a cache still saying Active, as upstream's
// forced live lookup; other namespaces keep reading the cache.
func TestRecentDeletionReadsStorage(t *testing.T) {
	ctx := t.Context()
	lookup := &laggingNamespaces{
		namespaces: namespaces{"team": corev1.NamespaceActive, "other": corev1.NamespaceActive},
		stored:     namespaces{"team": corev1.NamespaceTerminating, "other": corev1.NamespaceActive},
	}
	p := New(lookup)
	if err := p.Admit(ctx, admissiontest.Create(configMap("team")).Attributes()); err != nil {
		t.Fatalf("create before any deletion: %v (the cache says Active)", err)
	}
	if lookup.liveReads != 0 {
		t.Fatalf("%d live reads before any deletion, want 0", lookup.liveReads)
	}
	if err := p.Admit(ctx, admissiontest.Delete(namespace("team")).Attributes()); err != nil {
		t.Fatal(err)
	}
	err := p.Admit(ctx, admissiontest.Create(configMap("team")).Attributes())
	if !apierrors.IsForbidden(err) {
		t.Fatalf("create after the deletion = %v, want Forbidden (terminating, read from storage)", err)
	}
	if err := p.Admit(ctx, admissiontest.Create(configMap("other")).Attributes()); err != nil || lookup.liveReads != 1 {
		t.Fatalf("create in another namespace = %v with %d live reads, want allowed from the cache (1 live read in all)", err, lookup.liveReads)
	}
}
