package volumevalidation

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// The inputs of upstream's own validation tests
// (pkg/apis/storage/validation/validation_test.go:
// TestVolumeAttachmentValidation, TestVolumeAttachmentUpdateValidation,
// TestVolumeAttachmentValidationV1, TestValidateVolumeAttributesClass,
// TestValidateVolumeAttributesClassUpdate) as v1 objects, without the
// inline volume specs; their status cases become status writes.

func va(name, attacher, node string, pv *string) *storagev1.VolumeAttachment {
	return &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: attacher, NodeName: node, Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: pv}}}
}

var volumeName = ptr.To("pv-name")

func upstreamAttachments() map[string]*storagev1.VolumeAttachment {
	return map[string]*storagev1.VolumeAttachment{
		"valid":                       va("foo", "myattacher", "mynode", volumeName),
		"empty attacher":              va("foo", "", "mynode", volumeName),
		"empty node":                  va("foo", "myattacher", "", volumeName),
		"no source":                   va("foo", "myattacher", "mynode", nil),
		"empty volume name":           va("foo", "myattacher", "mynode", ptr.To("")),
		"bad volume name":             va("foo", "myattacher", "mynode", ptr.To("Bad_PV")),
		"invalid attacher (v1)":       va("foo", "invalid!@#$%^&*()", "mynode", volumeName),
		"long attacher":               va("foo", strings.Repeat("a", 64), "mynode", volumeName),
		"long invalid attacher":       va("foo", "_"+strings.Repeat("a", 300), "mynode", volumeName),
		"upper-case attacher":         va("foo", "Example.COM", "mynode", volumeName),
		"bad name and everything":     va("Bad_Name", "", "Bad_Node", ptr.To("")),
		"attacher with a slash":       va("foo", "a/b", "mynode", volumeName),
		"attacher repeated message":   va("foo", "-"+strings.Repeat("a", 62), "-n", ptr.To("-p")),
		"generate name":               {ObjectMeta: metav1.ObjectMeta{GenerateName: "Bad_"}, Spec: va("", "a", "n", volumeName).Spec},
		"bad labels":                  {ObjectMeta: metav1.ObjectMeta{Name: "foo", Labels: map[string]string{"bad key!": "v"}}, Spec: va("", "", "n", nil).Spec},
		"namespace on a cluster kind": {ObjectMeta: metav1.ObjectMeta{Name: "foo", Namespace: "default"}, Spec: va("", "a", "n", volumeName).Spec},
	}
}

// upstreamAttachmentStatuses are the status cases of upstream's tables,
// written through the status subresource.
func upstreamAttachmentStatuses() map[string]storagev1.VolumeAttachmentStatus {
	long := strings.Repeat("a", 256*1024)
	return map[string]storagev1.VolumeAttachmentStatus{
		"valid status": {Attached: true, AttachmentMetadata: map[string]string{"foo": "bar"},
			AttachError: &storagev1.VolumeError{Message: "hello world", ErrorCode: ptr.To[int32](7)}, DetachError: &storagev1.VolumeError{Message: "hello world"}},
		"too much metadata":     {AttachmentMetadata: map[string]string{"foo": long}},
		"long attach error":     {AttachError: &storagev1.VolumeError{Message: strings.Repeat("a", 1025)}},
		"long detach error":     {DetachError: &storagev1.VolumeError{Message: strings.Repeat("a", 1025)}},
		"negative error codes":  {AttachError: &storagev1.VolumeError{ErrorCode: ptr.To[int32](-1)}, DetachError: &storagev1.VolumeError{ErrorCode: ptr.To[int32](-2)}},
		"everything wrong":      {AttachmentMetadata: map[string]string{"foo": long}, AttachError: &storagev1.VolumeError{Message: strings.Repeat("a", 1025), ErrorCode: ptr.To[int32](-1)}},
		"detached, empty error": {Attached: false, DetachError: &storagev1.VolumeError{}},
	}
}

func vac(name, driver string, params map[string]string) *storagev1.VolumeAttributesClass {
	return &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}, DriverName: driver, Parameters: params}
}

func upstreamClasses() map[string]*storagev1.VolumeAttributesClass {
	many := map[string]string{}
	for i := range 513 {
		many[fmt.Sprint("k", i)] = "v"
	}
	return map[string]*storagev1.VolumeAttributesClass{
		"valid":                      vac("foo", "kubernetes.io/foo-driver", map[string]string{"foo-parameter": "free-form-string"}),
		"empty driver":               vac("foo", "", map[string]string{"a": "b"}),
		"invalid driver":             vac("foo", "kubernetes.io/invalid/foo-driver", map[string]string{"a": "b"}),
		"upper-case driver":          vac("foo", "Kubernetes.IO/Foo_Driver!", map[string]string{"a": "b"}),
		"no parameters":              vac("foo", "d", nil),
		"empty parameters":           vac("foo", "d", map[string]string{}),
		"empty key":                  vac("foo", "d", map[string]string{"": "v"}),
		"too large parameters":       vac("foo", "d", map[string]string{"a": strings.Repeat("v", 256*1024)}),
		"too many parameters":        vac("foo", "d", many),
		"invalid name":               vac("Bad_Name", "", nil),
		"driver with long name part": vac("foo", strings.Repeat("d", 64), map[string]string{"a": "b"}),
	}
}

// upstreamInlineSpecs are TestValidatePersistentVolumeSpec's inline specs.
func upstreamInlineSpecs() map[string]corev1.PersistentVolumeSpec {
	csi := corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "test-driver", VolumeHandle: "test-123", ReadOnly: true}}
	rwo := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	return map[string]corev1.PersistentVolumeSpec{
		"inline-pvspec-with-capacity": {Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10G")},
			PersistentVolumeSource: csi, AccessModes: rwo},
		"inline-pvspec-with-podSec":             {PersistentVolumeSource: csi, AccessModes: rwo, StorageClassName: "testclass"},
		"inline-pvspec-with-non-fs-volume-mode": {PersistentVolumeSource: csi, AccessModes: rwo, VolumeMode: ptr.To(corev1.PersistentVolumeBlock)},
		"inline-pvspec-with-non-retain-reclaim-policy": {PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRecycle,
			PersistentVolumeSource: csi, AccessModes: rwo},
		"inline-pvspec-with-node-affinity": {PersistentVolumeSource: csi, AccessModes: rwo, NodeAffinity: &corev1.VolumeNodeAffinity{
			Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "foo", Operator: corev1.NodeSelectorOpIn, Values: []string{"bar"}}}}}}}},
		"inline-pvspec-with-non-csi-source": {AccessModes: rwo, PersistentVolumeSource: corev1.PersistentVolumeSource{
			HostPath: &corev1.HostPathVolumeSource{Path: "/foo", Type: ptr.To(corev1.HostPathDirectory)}}},
		"inline-pvspec-valid-with-access-modes-and-mount-options": {PersistentVolumeSource: csi, AccessModes: rwo, MountOptions: []string{"soft", "read-write"}},
		"inline-pvspec-valid-with-access-modes":                   {PersistentVolumeSource: csi, AccessModes: rwo},
		"inline-pvspec-with-missing-acess-modes":                  {PersistentVolumeSource: csi, MountOptions: []string{"soft", "read-write"}},
		"inline-pvspec-with-claim-ref":                            {PersistentVolumeSource: csi, AccessModes: rwo, ClaimRef: &corev1.ObjectReference{Name: "c"}},
		"inline-pvspec-with-vac":                                  {PersistentVolumeSource: csi, AccessModes: rwo, VolumeAttributesClassName: ptr.To("-bad-")},
		"inline-pvspec-with-retain":                               {PersistentVolumeSource: csi, AccessModes: rwo, PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain},
		"inline-pvspec-with-bad-csi": {AccessModes: rwo, PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
			Driver: "Bad_Driver", NodePublishSecretRef: &corev1.SecretReference{}}}},
		"inline-pvspec-two-sources": {AccessModes: rwo, PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: csi.CSI,
			NFS: &corev1.NFSVolumeSource{Server: "s", Path: "p"}}},
		"inline-pvspec-empty": {},
	}
}

func TestUpstreamTables(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	both := func(name string, obj runtime.Object) {
		for _, defaulted := range []bool{false, true} {
			compare(t, cat, write{Name: fmt.Sprintf("%s (defaulted %v)", name, defaulted), Obj: obj, Defaulted: defaulted}, &c)
		}
	}
	for name, a := range upstreamAttachments() {
		both("attachment "+name, a)
	}
	old := va("foo", "myattacher", "mynode", volumeName)
	for name, a := range upstreamAttachments() {
		a.Name = "foo"
		compare(t, cat, write{Name: "attachment update to " + name, Obj: a, Old: old, Defaulted: true}, &c)
	}
	for name, st := range upstreamAttachmentStatuses() {
		for _, status := range []bool{true, false} {
			a := old.DeepCopy()
			a.Status = st
			compare(t, cat, write{Name: fmt.Sprintf("attachment status %s (status %v)", name, status), Obj: a, Old: old, Status: status, Defaulted: true}, &c)
			stored := old.DeepCopy()
			stored.Status = st
			renamed := stored.DeepCopy()
			renamed.Spec.NodeName = "other"
			compare(t, cat, write{Name: "attachment update over stored status " + name, Obj: renamed, Old: stored, Status: status, Defaulted: true}, &c)
		}
	}
	for name, spec := range upstreamInlineSpecs() {
		a := va("foo", "myattacher", "mynode", nil)
		a.Spec.Source.InlineVolumeSpec = &spec
		both("attachment with inline spec "+name, a)
		a = a.DeepCopy()
		a.Spec.Source.PersistentVolumeName = volumeName
		both("attachment with inline spec and volume name "+name, a)
	}
	for name, v := range upstreamClasses() {
		both("class "+name, v)
	}
	oldClass := vac("foo", "kubernetes.io/foo-driver", map[string]string{"foo": "bar"})
	for name, v := range upstreamClasses() {
		v.Name = "foo"
		compare(t, cat, write{Name: "class update to " + name, Obj: v, Old: oldClass, Defaulted: true}, &c)
	}
	t.Log(c.String())
}
