package noderestriction

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

// labelledDiff is upstream's message for a label added through the status
// of a claim: a diff of the JSON of its internal type (Go field names).
const labelledDiff = `persistentvolumeclaims "c" is forbidden: node "n1" is not allowed to update fields other than status.quantity and status.conditions: @@ -1,6 +1,9 @@
 {
  "name": "c",
  "namespace": "ns",
+ "labels": {
+  "a": "b"
+ },
  "Spec": {
   "AccessModes": [
    "ReadWriteOnce"
`

func TestPVCStatus(t *testing.T) {
	pvcs := schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	old := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", ResourceVersion: "1"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}}}
	changed := func(f func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
		c := old.DeepCopy()
		f(c)
		return c
	}
	grown := changed(func(c *corev1.PersistentVolumeClaim) {
		c.ResourceVersion = ""
		c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}
		c.Status.AllocatedResources = c.Status.Capacity
		c.Status.Conditions = []corev1.PersistentVolumeClaimCondition{{Type: corev1.PersistentVolumeClaimResizing}}
	})
	labelled := changed(func(c *corev1.PersistentVolumeClaim) { c.Labels = map[string]string{"a": "b"} })
	p := testPlugin(nil)
	admissiontest.Run(t, p, []admissiontest.Case{
		{Name: "capacity, allocation and conditions", Attributes: admissiontest.Update(grown, old).Resource(pvcs, "status").User(node1, nodes...).Attributes()},
		{Name: "labels", Attributes: admissiontest.Update(labelled, old).Resource(pvcs, "status").User(node1, nodes...).Attributes(),
			WantErr: labelledDiff, WantCode: 403},
		{Name: "the claim itself", Attributes: admissiontest.Update(grown, old).User(node1, nodes...).Attributes(),
			WantErr: `persistentvolumeclaims "c" is forbidden: may only update PVC status`},
		{Name: "create status", Attributes: admissiontest.Create(old).Resource(pvcs, "status").User(node1, nodes...).Attributes(),
			WantErr: `persistentvolumeclaims "c" is forbidden: unexpected operation "CREATE"`},
	})
}
