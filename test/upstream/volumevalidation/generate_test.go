package volumevalidation

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// writesPerKind are the generated creates, updates and (for attachments)
// status writes compared per kind.
const writesPerKind = 2000

var kinds = []string{"VolumeAttachment", "VolumeAttributesClass"}

func TestGenerated(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	for ki, kind := range kinds {
		g := &generator{rng: rand.New(rand.NewSource(int64(ki + 1)))}
		for i := range writesPerKind {
			w := write{Name: fmt.Sprintf("%s #%d create", kind, i), Defaulted: !g.chance(8)}
			switch g.rng.Intn(3) {
			case 0:
				w.Obj = g.object(kind)
			case 1:
				w.Old = g.stored(kind)
				w.Name, w.Obj, w.Defaulted = fmt.Sprintf("%s #%d update", kind, i), g.changed(w.Old), true
			default: // a status write of an attachment, another update of a class
				w.Old = g.stored(kind)
				w.Status = kind == "VolumeAttachment"
				w.Name, w.Obj, w.Defaulted = fmt.Sprintf("%s #%d update (status %v)", kind, i, w.Status), g.changed(w.Old), true
			}
			compare(t, cat, w, &c)
		}
	}
	t.Log(c.String())
	if c.Refused < len(kinds)*writesPerKind/4 || c.Accepted < len(kinds)*writesPerKind/8 {
		t.Errorf("generated writes are too one-sided: %s", c.String())
	}
}

type generator struct{ rng *rand.Rand }

func (g *generator) pick(options ...string) string { return options[g.rng.Intn(len(options))] }

func (g *generator) chance(n int) bool { return g.rng.Intn(n) == 0 }

// mostly returns valid most of the time, else any of the others.
func (g *generator) mostly(valid string, others ...string) string {
	if g.rng.Intn(4) != 0 {
		return valid
	}
	return g.pick(others...)
}

var attachers = []string{"", "Disk.CSI.Example.com", "a/b", "_bad", "-x", strings.Repeat("a", 64), strings.Repeat("b", 254), "x"}

func (g *generator) meta(name string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: g.mostly(name, "", "Bad_Name", "a/b", "x.y", strings.Repeat("n", 254))}
	if g.chance(12) {
		m.GenerateName = g.pick("gen-", "Bad_", "a/")
	}
	if g.chance(8) {
		m.Labels = map[string]string{g.mostly("app", "bad key!"): g.mostly("web", "bad value!")}
	}
	if g.chance(15) {
		m.Finalizers = []string{g.pick("cleanup", "example.com/x", "kubernetes")}
	}
	if g.chance(10) {
		m.Generation = int64(g.rng.Intn(4) - 1)
	}
	if g.chance(20) {
		m.Namespace = "default"
	}
	return m
}

func (g *generator) object(kind string) runtime.Object {
	if kind == "VolumeAttachment" {
		a := &storagev1.VolumeAttachment{ObjectMeta: g.meta("va-1"), Spec: storagev1.VolumeAttachmentSpec{
			Attacher: g.mostly("disk.csi.example.com", attachers...), NodeName: g.mostly("node-1", "", "Node_1", "n/1")}}
		if !g.chance(3) {
			a.Spec.Source.PersistentVolumeName = ptr.To(g.mostly("pv-1", "", "PV_1"))
		}
		if a.Spec.Source.PersistentVolumeName == nil && !g.chance(6) || g.chance(20) {
			a.Spec.Source.InlineVolumeSpec = g.inlineVolumeSpec()
		}
		if g.chance(4) {
			a.Status = g.attachmentStatus()
		}
		return a
	}
	return &storagev1.VolumeAttributesClass{ObjectMeta: g.meta("gold"),
		DriverName: g.mostly("disk.csi.example.com", "", "Upper.Case/Driver", "a/b/c", "-bad", strings.Repeat("d", 64)), Parameters: g.params()}
}

// inlineVolumeSpec is a CSI volume spec as an attachment carries it,
// valid most of the time, else with what inline specs may not have or a
// CSI source with bad fields.
func (g *generator) inlineVolumeSpec() *corev1.PersistentVolumeSpec {
	s := &corev1.PersistentVolumeSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}}
	s.CSI = &corev1.CSIPersistentVolumeSource{Driver: g.mostly("disk.csi.example.com", "", "Bad_Driver", strings.Repeat("d", 64)),
		VolumeHandle: g.mostly("h", "")}
	if g.chance(5) {
		s.CSI.NodePublishSecretRef = &corev1.SecretReference{Name: g.mostly("s", "", "Bad_Name"), Namespace: g.mostly("default", "", "Bad.NS")}
	}
	switch g.rng.Intn(14) {
	case 0:
		s.CSI = nil
	case 1:
		s.CSI, s.NFS = nil, &corev1.NFSVolumeSource{Server: "nfs", Path: "/p"}
	case 2:
		s.NFS = &corev1.NFSVolumeSource{Server: "nfs", Path: "/p"}
	case 3:
		s.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
	case 4:
		s.ClaimRef = &corev1.ObjectReference{Name: "claim"}
	case 5:
		s.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimPolicy(g.pick("Retain", "Delete", "Bad"))
	case 6:
		s.VolumeMode = ptr.To(corev1.PersistentVolumeMode(g.pick("Filesystem", "Block", "Bad")))
	case 7:
		s.NodeAffinity = &corev1.VolumeNodeAffinity{}
	case 8:
		s.StorageClassName = g.pick("fast", "Bad_Class")
	case 9:
		s.AccessModes = []corev1.PersistentVolumeAccessMode{g.pick2("ReadWriteOncePod", "Bad"), corev1.ReadOnlyMany}
	case 10:
		s.AccessModes = nil
	case 11:
		s.VolumeAttributesClassName = ptr.To(g.pick("", "Bad_Class"))
	}
	return s
}

func (g *generator) pick2(options ...corev1.PersistentVolumeAccessMode) corev1.PersistentVolumeAccessMode {
	return options[g.rng.Intn(len(options))]
}

func (g *generator) attachmentStatus() storagev1.VolumeAttachmentStatus {
	st := storagev1.VolumeAttachmentStatus{Attached: g.chance(2)}
	if g.chance(3) {
		st.AttachmentMetadata = map[string]string{"k": g.mostly("v", strings.Repeat("v", 256*1024))}
	}
	volumeError := func() *storagev1.VolumeError {
		if g.chance(2) {
			return nil
		}
		e := &storagev1.VolumeError{Message: g.mostly("failed", strings.Repeat("m", 1025))}
		if g.chance(2) {
			e.ErrorCode = ptr.To(int32(g.rng.Intn(5) - 2))
		}
		return e
	}
	st.AttachError, st.DetachError = volumeError(), volumeError()
	return st
}

// params is nil, empty, or one to three parameters, keys possibly empty
// or values too large.
func (g *generator) params() map[string]string {
	switch g.rng.Intn(8) {
	case 0:
		return nil
	case 1:
		return map[string]string{}
	}
	out := map[string]string{}
	for range 1 + g.rng.Intn(3) {
		out[g.mostly(fmt.Sprint("p", g.rng.Intn(5)), "", "Bad Key")] = g.mostly("v", strings.Repeat("v", 200*1024))
	}
	return out
}

// stored is an object as stored: defaulted, with a valid name and a
// resourceVersion, and otherwise whatever was allowed when it was written.
func (g *generator) stored(kind string) runtime.Object {
	obj := g.object(kind)
	m := metaOf(obj)
	m.Name = map[string]string{"VolumeAttachment": "va-1", "VolumeAttributesClass": "gold"}[kind]
	m.GenerateName, m.ResourceVersion, m.Generation, m.Finalizers, m.Namespace = "", "7", 0, nil, ""
	m.Annotations, m.Labels = nil, nil
	legacyscheme.Scheme.Default(obj)
	return obj
}

// changed is a write over old: some fields kept, some changed (status
// included).
func (g *generator) changed(old runtime.Object) runtime.Object {
	obj := old.DeepCopyObject()
	m := metaOf(obj)
	if g.chance(4) {
		m.Labels = map[string]string{"tier": g.mostly("gold", "bad value!")}
	}
	if g.chance(15) {
		m.ResourceVersion = ""
	}
	if g.chance(20) {
		m.Name = "renamed"
	}
	fresh := g.object(map[bool]string{true: "VolumeAttachment", false: "VolumeAttributesClass"}[isAttachment(obj)])
	switch o := obj.(type) {
	case *storagev1.VolumeAttachment:
		f := fresh.(*storagev1.VolumeAttachment)
		switch g.rng.Intn(5) {
		case 0:
			o.Spec = f.Spec
		case 1:
			o.Spec.NodeName = f.Spec.NodeName
		case 2:
			o.Spec.Attacher = f.Spec.Attacher
		}
		if g.chance(2) {
			o.Status = g.attachmentStatus()
		}
	case *storagev1.VolumeAttributesClass:
		f := fresh.(*storagev1.VolumeAttributesClass)
		switch g.rng.Intn(4) {
		case 0:
			o.DriverName = f.DriverName
		case 1:
			o.Parameters = f.Parameters
		}
	}
	return obj
}

func isAttachment(obj runtime.Object) bool {
	_, ok := obj.(*storagev1.VolumeAttachment)
	return ok
}

func metaOf(obj runtime.Object) *metav1.ObjectMeta {
	switch o := obj.(type) {
	case *storagev1.VolumeAttachment:
		return &o.ObjectMeta
	case *storagev1.VolumeAttributesClass:
		return &o.ObjectMeta
	}
	panic(fmt.Sprintf("not a volume object: %T", obj))
}
