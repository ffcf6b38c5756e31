package pvvalidation

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// generatedWrites are the generated creates, updates and status writes
// compared.
const generatedWrites = 6000

func TestGenerated(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	g := &generator{rng: rand.New(rand.NewSource(37))}
	for i := range generatedWrites {
		w := write{Name: fmt.Sprintf("#%d create", i), Defaulted: !g.chance(8)}
		switch g.rng.Intn(3) {
		case 0:
			w.Obj = g.volume()
		case 1:
			old := g.stored()
			w.Name, w.Obj, w.Old, w.Defaulted = fmt.Sprintf("#%d update", i), g.changed(old), old, true
		default:
			old := g.stored()
			w.Name, w.Obj, w.Old, w.Status, w.Defaulted = fmt.Sprintf("#%d status write", i), g.statusChanged(old), old, true, true
		}
		compare(t, cat, w, &c)
	}
	t.Log(c.String())
	if c.Refused < generatedWrites/4 || c.Accepted < generatedWrites/8 || c.Warned == 0 {
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

func (g *generator) meta() metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: g.mostly("pv-1", "", "Bad_Name", strings.Repeat("n", 60), strings.Repeat("n", 254)), ResourceVersion: "1"}
	if g.chance(8) {
		m.Labels = map[string]string{g.mostly("app", "bad key!"): g.mostly("web", "bad value!")}
	}
	if g.chance(6) {
		m.Annotations = map[string]string{g.pick(corev1.MountOptionAnnotation, "volume.beta.kubernetes.io/storage-class", "note"): "x"}
	}
	if g.chance(20) {
		m.Namespace = "default"
	}
	return m
}

func (g *generator) volume() *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: g.meta(), Spec: g.spec()}
}

var names = []string{"", "ok", "Bad_Name", "-x-", "a.b", strings.Repeat("l", 64), strings.Repeat("s", 254)}

func (g *generator) name() string { return g.mostly("ok", names...) }

func (g *generator) spec() corev1.PersistentVolumeSpec {
	s := corev1.PersistentVolumeSpec{PersistentVolumeSource: g.source()}
	if g.chance(12) {
		s.PersistentVolumeSource = mergeSources(s.PersistentVolumeSource, g.source())
	}
	if !g.chance(10) {
		s.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(g.mostly("1Gi", "0", "-1", "10m", "1"))}
	}
	if g.chance(10) {
		s.Capacity = corev1.ResourceList{corev1.ResourceName(g.pick("cpu", "storage", "memory")): resource.MustParse(g.pick("1", "-2", "0")),
			corev1.ResourceName(g.pick("cpu", "example.com/x")): resource.MustParse(g.pick("1", "-2"))}
	}
	if !g.chance(10) {
		modes := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod, "Bad"}
		for range 1 + g.rng.Intn(2) {
			s.AccessModes = append(s.AccessModes, modes[g.rng.Intn(len(modes))])
		}
	}
	if g.chance(3) {
		s.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimPolicy(g.pick("Retain", "Delete", "Recycle", "Bad"))
	}
	if g.chance(4) {
		s.VolumeMode = ptr.To(corev1.PersistentVolumeMode(g.mostly("Filesystem", "Block", "Bad")))
	}
	if g.chance(4) {
		s.StorageClassName = g.mostly("fast", "Bad_Class", "-x")
	}
	if g.chance(8) {
		s.VolumeAttributesClassName = ptr.To(g.mostly("gold", "", "Bad_Class"))
	}
	if g.chance(3) || s.Local != nil && !g.chance(4) {
		s.NodeAffinity = g.affinity()
	}
	if g.chance(10) {
		s.ClaimRef = &corev1.ObjectReference{Name: "claim", Namespace: "default"}
	}
	if g.chance(8) {
		s.MountOptions = []string{"ro"}
	}
	return s
}

func mergeSources(a, b corev1.PersistentVolumeSource) corev1.PersistentVolumeSource {
	out := a
	if b.CSI != nil {
		out.CSI = b.CSI
	}
	if b.HostPath != nil {
		out.HostPath = b.HostPath
	}
	if b.FlexVolume != nil {
		out.FlexVolume = b.FlexVolume
	}
	if b.NFS != nil {
		out.NFS = b.NFS
	}
	if b.Local != nil {
		out.Local = b.Local
	}
	return out
}

var deprecatedKeys = []string{"foo", corev1.LabelFailureDomainBetaZone, corev1.LabelTopologyZone, corev1.LabelFailureDomainBetaRegion,
	corev1.LabelTopologyRegion, "beta.kubernetes.io/os", corev1.LabelOSStable, "node-role.kubernetes.io/master", "bad key!", ""}

func (g *generator) affinity() *corev1.VolumeNodeAffinity {
	if g.chance(10) {
		return &corev1.VolumeNodeAffinity{}
	}
	var terms []corev1.NodeSelectorTerm
	for range g.rng.Intn(3) {
		var t corev1.NodeSelectorTerm
		for range 1 + g.rng.Intn(2) {
			t.MatchExpressions = append(t.MatchExpressions, corev1.NodeSelectorRequirement{Key: deprecatedKeys[g.rng.Intn(len(deprecatedKeys))],
				Operator: corev1.NodeSelectorOperator(g.mostly("In", "NotIn", "Exists", "Gt", "Bad")), Values: g.values()})
		}
		if g.chance(4) {
			t.MatchFields = append(t.MatchFields, corev1.NodeSelectorRequirement{Key: g.mostly("metadata.name", "bad"),
				Operator: corev1.NodeSelectorOperator(g.mostly("In", "Exists")), Values: g.values()})
		}
		terms = append(terms, t)
	}
	return &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: terms}}
}

func (g *generator) values() []string {
	switch g.rng.Intn(4) {
	case 0:
		return nil
	case 1:
		return []string{"a", "b"}
	}
	return []string{g.mostly("node-1", "-1", "Bad_Node!", strings.Repeat("v", 64))}
}

func (g *generator) secretRef() *corev1.SecretReference {
	if !g.chance(3) {
		return nil
	}
	return &corev1.SecretReference{Name: g.mostly("s", "", "Bad_Name", "a.b"), Namespace: g.mostly("default", "", "Bad.NS")}
}

func (g *generator) path() string { return g.mostly("/data", "", "relative", "/a/..", "/", "../x") }

// source is one volume source, of any type, valid or not.
func (g *generator) source() corev1.PersistentVolumeSource {
	var s corev1.PersistentVolumeSource
	switch g.rng.Intn(24) {
	case 0, 1:
		s.HostPath = &corev1.HostPathVolumeSource{Path: g.path()}
		if g.chance(2) {
			s.HostPath.Type = ptr.To(corev1.HostPathType(g.mostly("Directory", "Bad", "")))
		}
	case 2:
		s.GCEPersistentDisk = &corev1.GCEPersistentDiskVolumeSource{PDName: g.mostly("pd", ""), Partition: int32(g.rng.Intn(300) - 20)}
	case 3:
		s.AWSElasticBlockStore = &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: g.mostly("vol", ""), Partition: int32(g.rng.Intn(300) - 20)}
	case 4:
		s.Glusterfs = &corev1.GlusterfsPersistentVolumeSource{EndpointsName: g.mostly("ep", ""), Path: g.mostly("vol", "")}
		if g.chance(2) {
			s.Glusterfs.EndpointsNamespace = ptr.To(g.mostly("ns", "", "Bad_NS"))
		}
	case 5:
		s.Flocker = &corev1.FlockerVolumeSource{DatasetName: g.pick("", "ds", "a/b"), DatasetUUID: g.pick("", "uuid")}
	case 6, 7:
		s.NFS = &corev1.NFSVolumeSource{Server: g.mostly("nfs", ""), Path: g.path()}
	case 8:
		s.RBD = &corev1.RBDPersistentVolumeSource{RBDImage: g.mostly("img", "")}
		if !g.chance(4) {
			s.RBD.CephMonitors = []string{"m"}
		}
	case 9:
		s.Quobyte = &corev1.QuobyteVolumeSource{Registry: g.mostly("h:1", "", "h", "h:1,x"), Volume: g.mostly("v", ""), Tenant: g.mostly("t", strings.Repeat("t", 65))}
	case 10:
		s.CephFS = &corev1.CephFSPersistentVolumeSource{}
		if !g.chance(3) {
			s.CephFS.Monitors = []string{"m"}
		}
	case 11, 12:
		s.ISCSI = g.iscsi()
	case 13:
		s.Cinder = &corev1.CinderPersistentVolumeSource{VolumeID: g.mostly("v", ""), SecretRef: g.secretRef()}
	case 14:
		s.FC = &corev1.FCVolumeSource{}
		if !g.chance(3) {
			s.FC.TargetWWNs = []string{"w"}
		}
		if g.chance(3) {
			s.FC.WWIDs = []string{"id"}
		}
		if g.chance(2) {
			s.FC.Lun = ptr.To(int32(g.rng.Intn(300) - 20))
		}
	case 15:
		s.FlexVolume = &corev1.FlexPersistentVolumeSource{Driver: g.mostly("example/flex", ""),
			Options: map[string]string{g.mostly("opt", "kubernetes.io/x", "A.K8S.IO/y", "k8s.io"): "v"}}
	case 16:
		s.AzureFile = &corev1.AzureFilePersistentVolumeSource{SecretName: g.mostly("s", ""), ShareName: g.mostly("share", "")}
		if g.chance(2) {
			s.AzureFile.SecretNamespace = ptr.To(g.mostly("ns", ""))
		}
	case 17:
		s.VsphereVolume = &corev1.VsphereVirtualDiskVolumeSource{VolumePath: g.mostly("[ds] p", "")}
	case 18:
		s.PhotonPersistentDisk = &corev1.PhotonPersistentDiskVolumeSource{PdID: g.mostly("id", "")}
	case 19:
		s.PortworxVolume = &corev1.PortworxVolumeSource{VolumeID: g.mostly("id", "")}
	case 20:
		s.AzureDisk = &corev1.AzureDiskVolumeSource{DiskName: g.mostly("d", ""), DataDiskURI: g.pick("https://x/d.vhd", "/subscriptions/x", "", "ftp://x")}
		if g.chance(2) {
			s.AzureDisk.Kind = ptr.To(corev1.AzureDataDiskKind(g.pick("Managed", "Shared", "Dedicated", "Bad")))
		}
		if g.chance(3) {
			s.AzureDisk.CachingMode = ptr.To(corev1.AzureDataDiskCachingMode(g.pick("None", "ReadOnly", "Bad")))
		}
	case 21:
		s.ScaleIO = &corev1.ScaleIOPersistentVolumeSource{Gateway: g.mostly("gw", ""), System: g.mostly("sys", ""), VolumeName: g.mostly("v", "")}
	case 22:
		s.Local = &corev1.LocalVolumeSource{Path: g.path()}
	default:
		if g.chance(4) {
			s.StorageOS = &corev1.StorageOSPersistentVolumeSource{VolumeName: g.mostly("v", "", "Bad_V"), VolumeNamespace: g.pick("", "ns", "Bad.NS")}
			if g.chance(2) {
				s.StorageOS.SecretRef = &corev1.ObjectReference{Name: g.mostly("s", ""), Namespace: g.mostly("ns", "")}
			}
			return s
		}
		s.CSI = &corev1.CSIPersistentVolumeSource{Driver: g.mostly("csi.example.com", "", "Bad_Driver", strings.Repeat("d", 64)),
			VolumeHandle: g.mostly("h", ""), ControllerPublishSecretRef: g.secretRef(), NodeStageSecretRef: g.secretRef(),
			NodePublishSecretRef: g.secretRef(), ControllerExpandSecretRef: g.secretRef(), NodeExpandSecretRef: g.secretRef()}
	}
	return s
}

func (g *generator) iscsi() *corev1.ISCSIPersistentVolumeSource {
	names := []string{"iqn.2015-02.example.com:test", "eui.0123456789ABCDEF", "naa.62004567BA64678D0123456789ABCDEF", "iqn.bad", "eui.short", "naa.x", "bad", ""}
	s := &corev1.ISCSIPersistentVolumeSource{TargetPortal: g.mostly("127.0.0.1:3260", "", strings.Repeat("p", 60)), IQN: g.mostly(names[0], names...),
		Lun: int32(g.rng.Intn(300) - 20), DiscoveryCHAPAuth: g.chance(4), SessionCHAPAuth: g.chance(4)}
	if g.chance(3) {
		s.InitiatorName = ptr.To(g.mostly(names[1], names...))
	}
	if g.chance(3) {
		s.SecretRef = &corev1.SecretReference{Name: g.mostly("s", "")}
	}
	return s
}

// stored is a volume as kube-apiserver stored it: valid most of the time,
// defaulted, Pending or Bound since long ago.
func (g *generator) stored() *corev1.PersistentVolume {
	v := g.volume()
	v.Name, v.Namespace = "pv-1", ""
	legacyscheme.Scheme.Default(v)
	v.Status = corev1.PersistentVolumeStatus{Phase: corev1.PersistentVolumePhase(g.pick("Pending", "Bound", "Available")), LastPhaseTransitionTime: longAgo.DeepCopy()}
	return v
}

// changed is an update of old: its spec changed in one of the ways the
// update rules look at, or not at all.
func (g *generator) changed(old *corev1.PersistentVolume) *corev1.PersistentVolume {
	v := old.DeepCopy()
	switch g.rng.Intn(9) {
	case 0:
		v.Spec.PersistentVolumeSource = g.source()
	case 1:
		if v.Spec.CSI != nil {
			v.Spec.CSI.ControllerExpandSecretRef = g.secretRef()
		} else if v.Spec.HostPath != nil {
			v.Spec.HostPath.Path += "x"
		}
	case 2:
		v.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeMode(g.pick("Block", "Filesystem", "Bad")))
	case 3:
		v.Spec.NodeAffinity = g.affinity()
	case 4:
		if a := v.Spec.NodeAffinity; a != nil && a.Required != nil {
			for i := range a.Required.NodeSelectorTerms {
				for j := range a.Required.NodeSelectorTerms[i].MatchExpressions {
					r := &a.Required.NodeSelectorTerms[i].MatchExpressions[j]
					r.Key = map[string]string{corev1.LabelFailureDomainBetaZone: corev1.LabelTopologyZone, corev1.LabelTopologyZone: "foo",
						"beta.kubernetes.io/os": corev1.LabelOSStable}[r.Key]
				}
			}
		}
	case 5:
		v.Spec.VolumeAttributesClassName = g.pick2(nil, ptr.To("gold"), ptr.To(""))
	case 6:
		v.Spec.ClaimRef = &corev1.ObjectReference{Name: "claim", Namespace: "default", UID: "u"}
	case 7:
		v.Labels = map[string]string{"changed": g.mostly("yes", "bad value!")}
	}
	if g.chance(5) {
		v.Status.Phase = corev1.VolumeReleased
	}
	return v
}

func (g *generator) pick2(options ...*string) *string { return options[g.rng.Intn(len(options))] }

// statusChanged is a status write over old: a new phase, message or
// transition time, and now and then a spec or label change the status
// strategy drops or keeps.
func (g *generator) statusChanged(old *corev1.PersistentVolume) *corev1.PersistentVolume {
	v := old.DeepCopy()
	if g.chance(2) {
		v.Status.Phase = corev1.PersistentVolumePhase(g.pick("Pending", "Available", "Bound", "Released", "Failed"))
	}
	switch g.rng.Intn(4) {
	case 0:
		v.Status.LastPhaseTransitionTime = nil
	case 1:
		t := metav1.NewTime(longAgo.Add(3600e9))
		v.Status.LastPhaseTransitionTime = &t
	}
	if g.chance(3) {
		v.Status.Message, v.Status.Reason = "m", "r"
	}
	if g.chance(4) {
		v.Spec.PersistentVolumeSource = g.source()
	}
	if g.chance(4) {
		v.Labels = map[string]string{"x": g.mostly("y", "bad value!")}
	}
	if g.chance(8) {
		v.ResourceVersion = ""
	}
	return v
}
