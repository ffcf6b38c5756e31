package alwaysadmit

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

func TestAlwaysAdmit(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"}}
	admissiontest.Run(t, Plugin{}, []admissiontest.Case{
		{Name: "create", Attributes: admissiontest.Create(cm).Attributes(), WantObject: cm.DeepCopy()},
		{Name: "update", Attributes: admissiontest.Update(cm, cm).Attributes(), WantObject: cm.DeepCopy()},
		{Name: "delete", Attributes: admissiontest.Delete(cm).Attributes()},
	})
	for _, op := range []admission.Operation{admission.Create, admission.Update, admission.Delete, admission.Connect} {
		if !(Plugin{}).Handles(op) {
			t.Errorf("Handles(%s) = false, want true", op)
		}
	}
}
