package pvvalidation

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// The inputs of upstream's own validation tests
// (pkg/apis/core/validation/validation_test.go: TestValidatePersistentVolumes,
// TestValidatePersistentVolumeSpec, TestValidatePersistentVolumeSourceUpdate,
// TestValidationOptionsForPersistentVolume, TestValidateLocalVolumes,
// TestValidateVolumeNodeAffinityUpdate, TestAlphaPVVolumeModeUpdate,
// TestValidatePVSecretReference) as v1 objects. Their inline specs are
// VolumeAttachments' inline volume specs in test/upstream/volumevalidation.

func hostPathSpec(capacity string) corev1.PersistentVolumeSpec {
	return corev1.PersistentVolumeSpec{
		Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)},
		AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/foo", Type: ptr.To(corev1.HostPathDirectory)}},
	}
}

func pv(name string, spec corev1.PersistentVolumeSpec, change func(*corev1.PersistentVolumeSpec)) *corev1.PersistentVolume {
	if change != nil {
		change(&spec)
	}
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}, Spec: spec}
}

func simpleAffinity(key, value string) *corev1.VolumeNodeAffinity {
	return termsAffinity([][2]string{{key, value}})
}

// termsAffinity is a node affinity of one term per key and value.
func termsAffinity(pairs [][2]string) *corev1.VolumeNodeAffinity {
	var terms []corev1.NodeSelectorTerm
	for _, p := range pairs {
		terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: p[0], Operator: corev1.NodeSelectorOpIn, Values: []string{p[1]}}}})
	}
	return &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: terms}}
}

func localSpec(path string, affinity *corev1.VolumeNodeAffinity) corev1.PersistentVolumeSpec {
	s := hostPathSpec("10G")
	s.PersistentVolumeSource = corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: path}}
	s.NodeAffinity = affinity
	return s
}

func csiSpec(driver, handle string) corev1.PersistentVolumeSpec {
	s := hostPathSpec("1G")
	s.PersistentVolumeSource = corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: handle}}
	return s
}

func upstreamVolumes() map[string]*corev1.PersistentVolume {
	hp := func(c func(*corev1.PersistentVolumeSpec)) *corev1.PersistentVolume {
		return pv("foo", hostPathSpec("10G"), c)
	}
	return map[string]*corev1.PersistentVolume{
		"good-volume":                       hp(nil),
		"good-volume-with-capacity-unit":    pv("foo", hostPathSpec("10Gi"), nil),
		"good-volume-without-capacity-unit": pv("foo", hostPathSpec("10"), nil),
		"good-volume-with-storage-class":    hp(func(s *corev1.PersistentVolumeSpec) { s.StorageClassName = "valid" }),
		"good-volume-with-retain-policy": hp(func(s *corev1.PersistentVolumeSpec) {
			s.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
		}),
		"good-volume-with-volume-mode": hp(func(s *corev1.PersistentVolumeSpec) { s.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem) }),
		"invalid-accessmode":           hp(func(s *corev1.PersistentVolumeSpec) { s.AccessModes = []corev1.PersistentVolumeAccessMode{"fakemode"} }),
		"invalid-reclaimpolicy":        hp(func(s *corev1.PersistentVolumeSpec) { s.PersistentVolumeReclaimPolicy = "fakeReclaimPolicy" }),
		"invalid-volume-mode": hp(func(s *corev1.PersistentVolumeSpec) {
			s.VolumeMode = ptr.To(corev1.PersistentVolumeMode("fakeVolumeMode"))
		}),
		"with-read-write-once-pod": hp(func(s *corev1.PersistentVolumeSpec) {
			s.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}
		}),
		"with-read-write-once-pod-and-others": hp(func(s *corev1.PersistentVolumeSpec) {
			s.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadWriteMany}
		}),
		"unexpected-namespace":  {ObjectMeta: metav1.ObjectMeta{Name: "foo", Namespace: "unexpected-namespace"}, Spec: hostPathSpec("10G")},
		"missing-volume-source": hp(func(s *corev1.PersistentVolumeSpec) { s.PersistentVolumeSource = corev1.PersistentVolumeSource{} }),
		"bad-name":              pv("123*Bad(Name", hostPathSpec("10G"), nil),
		"missing-name":          pv("", hostPathSpec("10G"), nil),
		"missing-capacity":      hp(func(s *corev1.PersistentVolumeSpec) { s.Capacity = nil }),
		"bad-volume-zero-capacity": hp(func(s *corev1.PersistentVolumeSpec) {
			s.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("0")}
		}),
		"missing-accessmodes": hp(func(s *corev1.PersistentVolumeSpec) { s.AccessModes = nil }),
		"too-many-sources": hp(func(s *corev1.PersistentVolumeSpec) {
			s.GCEPersistentDisk = &corev1.GCEPersistentDiskVolumeSource{PDName: "foo", FSType: "ext4"}
			s.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5G")}
		}),
		"host mount of / with recycle reclaim policy": hp(func(s *corev1.PersistentVolumeSpec) {
			s.HostPath.Path = "/"
			s.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRecycle
		}),
		"host mount of / with recycle reclaim policy 2": hp(func(s *corev1.PersistentVolumeSpec) {
			s.HostPath.Path = "/a/.."
			s.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRecycle
		}),
		"invalid-storage-class-name":    hp(func(s *corev1.PersistentVolumeSpec) { s.StorageClassName = "-invalid-" }),
		"bad-hostpath-volume-backsteps": hp(func(s *corev1.PersistentVolumeSpec) { s.HostPath.Path = "/foo/.." }),
		"volume-node-affinity":          hp(func(s *corev1.PersistentVolumeSpec) { s.NodeAffinity = simpleAffinity("foo", "bar") }),
		"volume-empty-node-affinity":    hp(func(s *corev1.PersistentVolumeSpec) { s.NodeAffinity = &corev1.VolumeNodeAffinity{} }),
		"volume-bad-node-affinity": hp(func(s *corev1.PersistentVolumeSpec) {
			s.NodeAffinity = simpleAffinity("", "test-label-value")
		}),
		"invalid-volume-attributes-class-name": hp(func(s *corev1.PersistentVolumeSpec) {
			s.StorageClassName, s.VolumeAttributesClassName = "invalid", ptr.To("-invalid-")
		}),
		"invalid-empty-volume-attributes-class-name": hp(func(s *corev1.PersistentVolumeSpec) {
			s.StorageClassName, s.VolumeAttributesClassName = "invalid", ptr.To("")
		}),
		"volume-attributes-class-and-csi": pv("foo", csiSpec("test-driver", "test-123"), func(s *corev1.PersistentVolumeSpec) {
			s.StorageClassName, s.VolumeAttributesClassName = "valid", ptr.To("valid")
		}),
		"volume-attributes-class-without-csi": hp(func(s *corev1.PersistentVolumeSpec) {
			s.StorageClassName, s.VolumeAttributesClassName = "valid", ptr.To("valid")
		}),
		"pv-pvspec-valid": hp(func(s *corev1.PersistentVolumeSpec) {
			s.StorageClassName, s.PersistentVolumeReclaimPolicy = "testclass", corev1.PersistentVolumeReclaimRecycle
			s.VolumeMode, s.NodeAffinity = ptr.To(corev1.PersistentVolumeFilesystem), simpleAffinity("foo", "bar")
		}),
		"invalid-node-affinity": {ObjectMeta: metav1.ObjectMeta{Name: "foo"}, Spec: corev1.PersistentVolumeSpec{
			NodeAffinity: simpleAffinity("foo", "-1")}},
		"valid local volume":                    pv("foo", localSpec("/foo", simpleAffinity("foo", "bar")), nil),
		"invalid local volume no node affinity": pv("foo", localSpec("/foo", nil), nil),
		"invalid local volume empty path":       pv("foo", localSpec("", simpleAffinity("foo", "bar")), nil),
		"invalid-local-volume-backsteps":        pv("foo", localSpec("/foo/..", simpleAffinity("foo", "bar")), nil),
		"valid-local-volume-relative-path":      pv("foo", localSpec("foo", simpleAffinity("foo", "bar")), nil),
		"local volume with mount options annotation": {ObjectMeta: metav1.ObjectMeta{Name: "foo",
			Annotations: map[string]string{corev1.MountOptionAnnotation: "ro"}}, Spec: localSpec("/foo", simpleAffinity("foo", "bar"))},
		"nfs volume with mount options annotation": {ObjectMeta: metav1.ObjectMeta{Name: "foo",
			Annotations: map[string]string{corev1.MountOptionAnnotation: "ro"}}, Spec: hostPathSpecWith(corev1.PersistentVolumeSource{
			NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/p"}})},
		"storage class annotation": {ObjectMeta: metav1.ObjectMeta{Name: "foo",
			Annotations: map[string]string{"volume.beta.kubernetes.io/storage-class": "x"}}, Spec: hostPathSpec("1G")},
	}
}

func hostPathSpecWith(src corev1.PersistentVolumeSource) corev1.PersistentVolumeSpec {
	s := hostPathSpec("1G")
	s.PersistentVolumeSource = src
	return s
}

// secretRefs are TestValidatePVSecretReference's and
// TestValidatePersistentVolumeSourceUpdate's references.
var secretRefs = map[string]*corev1.SecretReference{
	"none": nil, "expansion": {Name: "expansion-secret", Namespace: "default"},
	"short": {Name: "key-name", Namespace: "default"}, "long": {Name: "key-name.example.com", Namespace: "default"},
	"invalid": {}, "missing name": {Namespace: "default"}, "missing namespace": {Name: "invalidnamespace"},
	"bad name": {Name: "Bad_Name", Namespace: "default"}, "bad namespace": {Name: "n", Namespace: "Bad.NS"},
}

// upstreamUpdates are the old and new volumes of the update tests.
func upstreamUpdates() map[string][2]*corev1.PersistentVolume {
	valid := pv("foo", hostPathSpec("1G"), func(s *corev1.PersistentVolumeSpec) { s.StorageClassName = "valid" })
	withSource := func(src corev1.PersistentVolumeSource) *corev1.PersistentVolume {
		v := valid.DeepCopy()
		v.Spec.PersistentVolumeSource = src
		return v
	}
	out := map[string][2]*corev1.PersistentVolume{
		"condition-no-update":          {valid, valid.DeepCopy()},
		"condition-update-source-type": {valid, withSource(corev1.PersistentVolumeSource{FlexVolume: &corev1.FlexPersistentVolumeSource{Driver: "kubernetes.io/blue", FSType: "ext4"}})},
		"condition-update-source-deep": {valid, withSource(corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/updated", Type: ptr.To(corev1.HostPathDirectory)}})},
	}
	csi := func(set func(*corev1.CSIPersistentVolumeSource)) *corev1.PersistentVolume {
		v := pv("csi-volume", csiSpec("come.google.gcepd", "foobar"), func(s *corev1.PersistentVolumeSpec) { s.StorageClassName = "gp2" })
		if set != nil {
			set(v.Spec.CSI)
		}
		return v
	}
	refSetters := map[string]func(c *corev1.CSIPersistentVolumeSource, r *corev1.SecretReference){
		"expansion":    func(c *corev1.CSIPersistentVolumeSource, r *corev1.SecretReference) { c.ControllerExpandSecretRef = r },
		"cntrlpublish": func(c *corev1.CSIPersistentVolumeSource, r *corev1.SecretReference) { c.ControllerPublishSecretRef = r },
		"nodepublish":  func(c *corev1.CSIPersistentVolumeSource, r *corev1.SecretReference) { c.NodePublishSecretRef = r },
		"nodestage":    func(c *corev1.CSIPersistentVolumeSource, r *corev1.SecretReference) { c.NodeExpandSecretRef = r },
	}
	for kind, set := range refSetters {
		for from, fr := range secretRefs {
			for to, tr := range secretRefs {
				old := csi(func(c *corev1.CSIPersistentVolumeSource) { set(c, fr.DeepCopy()) })
				cur := csi(func(c *corev1.CSIPersistentVolumeSource) { set(c, tr.DeepCopy()) })
				out[fmt.Sprintf("csi-%s-from-%s-to-%s", kind, from, to)] = [2]*corev1.PersistentVolume{old, cur}
			}
		}
	}
	mode := func(m *corev1.PersistentVolumeMode) *corev1.PersistentVolume {
		return pv("foo", hostPathSpec("10G"), func(s *corev1.PersistentVolumeSpec) { s.VolumeMode = m })
	}
	block, fs := ptr.To(corev1.PersistentVolumeBlock), ptr.To(corev1.PersistentVolumeFilesystem)
	for name, pair := range map[string][2]*corev1.PersistentVolumeMode{"block-to-fs": {block, fs}, "fs-to-block": {fs, block},
		"nil-to-block": {nil, block}, "block-to-nil": {block, nil}, "same": {block, block}} {
		out["volume mode "+name] = [2]*corev1.PersistentVolume{mode(pair[0]), mode(pair[1])}
	}
	affinity := func(a *corev1.VolumeNodeAffinity) *corev1.PersistentVolume {
		return pv("foo", hostPathSpec("10G"), func(s *corev1.PersistentVolumeSpec) { s.NodeAffinity = a })
	}
	zoneBeta, zoneGA := corev1.LabelFailureDomainBetaZone, corev1.LabelTopologyZone
	regionBeta, regionGA := corev1.LabelFailureDomainBetaRegion, corev1.LabelTopologyRegion
	for name, pair := range map[string][2]*corev1.VolumeNodeAffinity{
		"nil-nothing-changed":                     {nil, nil},
		"affinity-nothing-changed":                {simpleAffinity("foo", "bar"), simpleAffinity("foo", "bar")},
		"affinity-changed":                        {simpleAffinity("foo", "bar"), simpleAffinity("foo", "bar2")},
		"affinity-non-beta-label-changed":         {simpleAffinity("foo", "bar"), simpleAffinity("foo2", "bar")},
		"affinity-zone-beta-unchanged":            {simpleAffinity(zoneBeta, "bar"), simpleAffinity(zoneBeta, "bar")},
		"affinity-zone-beta-label-to-GA":          {simpleAffinity(zoneBeta, "bar"), simpleAffinity(zoneGA, "bar")},
		"affinity-zone-beta-label-to-non-GA":      {simpleAffinity(zoneBeta, "bar"), simpleAffinity("foo", "bar")},
		"affinity-zone-GA-label-changed":          {simpleAffinity(zoneGA, "bar"), simpleAffinity(zoneBeta, "bar")},
		"affinity-region-beta-label-to-GA":        {simpleAffinity(regionBeta, "bar"), simpleAffinity(regionGA, "bar")},
		"affinity-os-beta-label-to-GA":            {simpleAffinity("beta.kubernetes.io/os", "bar"), simpleAffinity(corev1.LabelOSStable, "bar")},
		"affinity-arch-beta-label-to-GA":          {simpleAffinity("beta.kubernetes.io/arch", "bar"), simpleAffinity(corev1.LabelArchStable, "bar")},
		"affinity-instance-type-beta-label-to-GA": {simpleAffinity(corev1.LabelInstanceType, "bar"), simpleAffinity(corev1.LabelInstanceTypeStable, "bar")},
		"affinity-multiple-beta-to-GA": {termsAffinity([][2]string{{zoneBeta, "a"}, {regionBeta, "b"}}),
			termsAffinity([][2]string{{zoneGA, "a"}, {regionGA, "b"}})},
		"affinity-multiple-partially-changed": {termsAffinity([][2]string{{zoneBeta, "a"}, {regionBeta, "b"}}),
			termsAffinity([][2]string{{zoneGA, "a"}, {"foo", "b"}})},
		"affinity-term-added":    {simpleAffinity("foo", "bar"), termsAffinity([][2]string{{"foo", "bar"}, {"a", "b"}})},
		"affinity-set":           {nil, simpleAffinity("foo", "bar")},
		"affinity-removed":       {simpleAffinity("foo", "bar"), nil},
		"old-invalid-value-kept": {simpleAffinity("foo", "-1"), simpleAffinity("foo", "-1")},
		"old-invalid-value-new":  {simpleAffinity("foo", "-1"), simpleAffinity("foo", "-2")},
	} {
		out["node affinity "+name] = [2]*corev1.PersistentVolume{affinity(pair[0]), affinity(pair[1])}
	}
	vac := func(name *string) *corev1.PersistentVolume {
		return pv("foo", csiSpec("d", "h"), func(s *corev1.PersistentVolumeSpec) { s.VolumeAttributesClassName = name })
	}
	for name, pair := range map[string][2]*string{"vac set": {nil, ptr.To("a")}, "vac changed": {ptr.To("a"), ptr.To("b")},
		"vac removed": {ptr.To("a"), nil}, "vac emptied": {ptr.To("a"), ptr.To("")}} {
		out[name] = [2]*corev1.PersistentVolume{vac(pair[0]), vac(pair[1])}
	}
	return out
}

func TestUpstreamTables(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	for name, v := range upstreamVolumes() {
		for _, defaulted := range []bool{false, true} {
			compare(t, cat, write{Name: fmt.Sprintf("%s (defaulted %v)", name, defaulted), Obj: v, Defaulted: defaulted}, &c)
		}
	}
	for name, pair := range upstreamUpdates() {
		old := pair[0].DeepCopy()
		compare(t, cat, write{Name: "update " + name, Obj: pair[1], Old: stored(old), Defaulted: true}, &c)
	}
	for name, v := range upstreamVolumes() {
		old := stored(pv("foo", hostPathSpec("10G"), nil))
		v = v.DeepCopy()
		v.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound, Message: "m"}
		compare(t, cat, write{Name: "status write over " + name, Obj: v, Old: old, Status: true, Defaulted: true}, &c)
	}
	t.Log(c.String())
	if c.Mismatches == 0 && c.Refused < 50 {
		t.Errorf("too few refusals: %s", c.String())
	}
}

// stored is v as kube-apiserver stored it: defaulted, created Pending
// long ago.
func stored(v *corev1.PersistentVolume) *corev1.PersistentVolume {
	v = v.DeepCopy()
	if v.Name == "" || strings.ContainsAny(v.Name, "*(") {
		v.Name = "foo"
	}
	v.ResourceVersion = "1"
	legacyscheme.Scheme.Default(v)
	v.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending, LastPhaseTransitionTime: longAgo.DeepCopy()}
	return v
}
