package alwaysdeny

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

func TestAlwaysDeny(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "pl-ad", Namespace: "default"}}
	generated := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-", Namespace: "default"}}
	view := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "view"}}
	admissiontest.Run(t, Plugin{}, []admissiontest.Case{
		{Name: "create", Attributes: admissiontest.Create(cm).Attributes(), WantCode: 403,
			WantErr: `configmaps "pl-ad" is forbidden: admission control is denying all modifications`},
		{Name: "create with generateName", Attributes: admissiontest.Create(generated).Attributes(), WantCode: 403,
			WantErr: `configmaps "gen-" is forbidden: admission control is denying all modifications`},
		{Name: "delete dry run", Attributes: admissiontest.Delete(view).DryRun().Attributes(), WantCode: 403,
			WantErr: `clusterroles.rbac.authorization.k8s.io "view" is forbidden: admission control is denying all modifications`},
		{Name: "connect", Attributes: admissiontest.Connect(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}, "exec").Attributes(), WantCode: 403,
			WantErr: `pods "p" is forbidden: admission control is denying all modifications`},
	})
	for _, op := range []admission.Operation{admission.Create, admission.Update, admission.Delete, admission.Connect} {
		if !(Plugin{}).Handles(op) {
			t.Errorf("Handles(%s) = false, want true", op)
		}
	}
}
