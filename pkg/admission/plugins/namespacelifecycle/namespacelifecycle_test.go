package namespacelifecycle

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

type namespaces map[string]corev1.NamespacePhase

func (n namespaces) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	phase, ok := n[name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: phase}}, nil
}

var (
	configmaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cmKind     = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	nsResource = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	nsKind     = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
)

func TestAdmit(t *testing.T) {
	p := &Plugin{namespaces: namespaces{"live": corev1.NamespaceActive, "dying": corev1.NamespaceTerminating}}
	cases := []struct {
		name   string
		attrs  admission.Attributes
		code   int32
		msg    string
		causes int
	}{
		{"create in active namespace", admission.Attributes{Operation: admission.Create, Namespace: "live", Name: "c", Resource: configmaps, Kind: cmKind}, 0, "", 0},
		{"create in missing namespace", admission.Attributes{Operation: admission.Create, Namespace: "gone", Name: "c", Resource: configmaps, Kind: cmKind}, 404, `namespaces "gone" not found`, 0},
		{"create in terminating namespace", admission.Attributes{Operation: admission.Create, Namespace: "dying", Name: "c", Resource: configmaps, Kind: cmKind}, 403,
			`configmaps "c" is forbidden: unable to create new content in namespace dying because it is being terminated`, 1},
		{"update in terminating namespace", admission.Attributes{Operation: admission.Update, Namespace: "dying", Name: "c", Resource: configmaps, Kind: cmKind}, 0, "", 0},
		{"delete in missing namespace", admission.Attributes{Operation: admission.Delete, Namespace: "gone", Name: "c", Resource: configmaps, Kind: cmKind}, 0, "", 0},
		{"delete kube-system", admission.Attributes{Operation: admission.Delete, Namespace: "kube-system", Name: "kube-system", Resource: nsResource, Kind: nsKind}, 403,
			`namespaces "kube-system" is forbidden: this namespace may not be deleted`, 0},
		{"delete other namespace", admission.Attributes{Operation: admission.Delete, Namespace: "live", Name: "live", Resource: nsResource, Kind: nsKind}, 0, "", 0},
		{"create namespace", admission.Attributes{Operation: admission.Create, Namespace: "new", Name: "new", Resource: nsResource, Kind: nsKind}, 0, "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.attrs.Record = admission.NewRecord()
			err := p.Admit(context.Background(), &tc.attrs)
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("Admit = %v, want admitted", err)
				}
				return
			}
			se, ok := err.(*apierrors.StatusError)
			if !ok || se.ErrStatus.Code != tc.code || se.ErrStatus.Message != tc.msg {
				t.Fatalf("Admit = %v, want %d %q", err, tc.code, tc.msg)
			}
			if tc.causes > 0 && (se.ErrStatus.Details == nil || len(se.ErrStatus.Details.Causes) != tc.causes || se.ErrStatus.Details.Causes[0].Type != corev1.NamespaceTerminatingCause) {
				t.Fatalf("details = %+v, want the NamespaceTerminating cause", se.ErrStatus.Details)
			}
		})
	}
}
