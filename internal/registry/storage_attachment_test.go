package registry

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

func attachment(name, attacher, node string, pv *string) *storagev1.VolumeAttachment {
	return &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: attacher, NodeName: node, Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: pv}}}
}

func TestVolumeAttachmentResources(t *testing.T) {
	r, ok := testCatalogue.Lookup(schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "volumeattributesclasses"})
	if !ok || r.Namespaced || r.StatusSubresource || !reflect.DeepEqual(r.ShortNames, []string{"vac"}) {
		t.Errorf("volumeattributesclasses = %+v, want cluster-scoped, no status, short name vac", r)
	}
}

func TestValidateVolumeAttachment(t *testing.T) {
	for _, tc := range []struct {
		name string
		va   *storagev1.VolumeAttachment
		want string
	}{
		{"valid", attachment("va-1", "disk.csi.example.com", "node-1", ptr.To("pv-1")), ""},
		// Recorded from kube-apiserver 1.37.2: the attacher's declarative
		// error comes last.
		{"empty", attachment("va-bad", "", "", nil),
			`[spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName, spec.nodeName: Invalid value: "": ` +
				dnsSubdomainMsg + `, spec.attacher: Required value]`},
		{"caseless attacher, long", attachment("va-2", "Disk_"+strings.Repeat("x", 60), "n", ptr.To("")),
			`[spec.source.persistentVolumeName: Required value: must specify non empty persistentVolumeName, spec.source.persistentVolumeName: Invalid value: "": ` +
				dnsSubdomainMsg + `, spec.attacher: Invalid value: "Disk_` + strings.Repeat("x", 60) + `": an RFC 1123 subdomain must consist of alphanumeric characters, '-' or '.', ` +
				`and must start and end with an alphanumeric character (e.g. 'Example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), ` +
				`spec.attacher: Too long: may not be more than 63 characters]`},
		{"both sources", &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va-3"}, Spec: storagev1.VolumeAttachmentSpec{Attacher: "a", NodeName: "n",
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv"), InlineVolumeSpec: &corev1.PersistentVolumeSpec{}}}},
			"spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(createErrors(t, tc.va)); got != tc.want {
				t.Errorf("create errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestVolumeAttachmentWrites(t *testing.T) {
	old := attachment("va-1", "disk.csi.example.com", "node-1", ptr.To("pv-1"))
	old.Status.Attached = true
	r := resourceFor(t, old)
	if errs := createErrors(t, old); len(errs) > 0 || old.Status.Attached {
		t.Fatalf("create: %v, status %+v; want allowed, an empty status", errs, old.Status)
	}
	moved := old.DeepCopy()
	moved.Spec.NodeName = "node-2"
	// Recorded from kube-apiserver 1.37.2.
	if got, want := aggregate(PrepareUpdate(r, moved, old)), "spec: Invalid value: null: field is immutable"; got != want {
		t.Errorf("node change: %s, want %s", got, want)
	}
	status := old.DeepCopy()
	status.Spec.NodeName, status.Labels = "node-2", map[string]string{"a": "b"}
	status.Status = storagev1.VolumeAttachmentStatus{Attached: true, AttachError: &storagev1.VolumeError{ErrorCode: ptr.To[int32](-1)}}
	out := PrepareForUpdate(r, "status", status, old).(*storagev1.VolumeAttachment)
	want := "status.attachError.errorCode: Invalid value: -1: must be between 0 and 2147483647, inclusive"
	if got := aggregate(r.ValidateSubresourceChange("status", out, old)); got != want || out.Spec.NodeName != "node-1" || out.Labels != nil || !out.Status.Attached {
		t.Errorf("status write: %s, kept %+v; want %s, the stored spec and labels, the new status", got, out, want)
	}
}

func TestVolumeAttributesClass(t *testing.T) {
	bad := &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: "bad-class"}}
	// Recorded from kube-apiserver 1.37.2.
	if got, want := aggregate(createErrors(t, bad)), "[driverName: Required value, parameters: Required value: must contain at least one key/value pair]"; got != want {
		t.Errorf("create errors = %s, want %s", got, want)
	}
	gold := &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: "gold", ResourceVersion: "1"}, DriverName: "Disk.CSI.Example.com",
		Parameters: map[string]string{"iops": "3000"}}
	r := resourceFor(t, gold)
	if errs := createErrors(t, gold); len(errs) > 0 {
		t.Fatalf("create: %v", errs)
	}
	changed := gold.DeepCopy()
	changed.Parameters["iops"] = "4000"
	if got, want := aggregate(PrepareUpdate(r, changed, gold)), "parameters: Forbidden: updates to parameters are forbidden."; got != want {
		t.Errorf("parameters change: %s, want %s", got, want)
	}
}
