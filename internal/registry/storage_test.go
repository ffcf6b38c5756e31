package registry

// Expected values follow upstream pkg/apis/storage/v1/defaults.go,
// pkg/apis/storage/validation (cases of its validation_test.go) and the
// strategies of pkg/registry/storage/{csidriver,csinode,csistoragecapacity}
// of kube-apiserver 1.37.2; test/upstream/csivalidation compares the two
// over generated objects.

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

func TestStorageResources(t *testing.T) {
	var names []string
	for _, r := range testCatalogue.Resources() {
		if r.Group == "storage.k8s.io" {
			names = append(names, r.Resource)
		}
	}
	want := []string{"csidrivers", "csinodes", "csistoragecapacities", "storageclasses", "volumeattachments", "volumeattributesclasses"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("storage.k8s.io resources = %q, want %q (upstream's discovery order)", names, want)
	}
	for _, tc := range []struct {
		resource, kind   string
		namespaced, stat bool
	}{
		{"csidrivers", "CSIDriver", false, false},
		{"csinodes", "CSINode", false, true},
		{"csistoragecapacities", "CSIStorageCapacity", true, false},
		{"volumeattachments", "VolumeAttachment", false, true},
	} {
		r, ok := testCatalogue.Lookup(schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: tc.resource})
		if !ok {
			t.Fatalf("Lookup(%s) = false, want served", tc.resource)
		}
		if r.Kind != tc.kind || r.Namespaced != tc.namespaced || r.StatusSubresource != tc.stat || r.ClearStatusOnCreate != tc.stat ||
			r.TracksGeneration || len(r.ShortNames) > 0 || len(r.Categories) > 0 {
			t.Errorf("%s = kind %s namespaced %v status %v/%v generation %v short %q categories %q; want %s %v %v, no generation, names or categories",
				tc.resource, r.Kind, r.Namespaced, r.StatusSubresource, r.ClearStatusOnCreate, r.TracksGeneration, r.ShortNames, r.Categories,
				tc.kind, tc.namespaced, tc.stat)
		}
	}
}

func TestCSIDriverDefaults(t *testing.T) {
	d := &storagev1.CSIDriver{}
	resourceFor(t, d).Default(d)
	want := storagev1.CSIDriverSpec{AttachRequired: ptr.To(true), PodInfoOnMount: ptr.To(false), StorageCapacity: ptr.To(false),
		FSGroupPolicy: ptr.To(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy), RequiresRepublish: ptr.To(false), SELinuxMount: ptr.To(false),
		VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}, PreventPodSchedulingIfMissing: ptr.To(false)}
	if !reflect.DeepEqual(d.Spec, want) {
		t.Errorf("defaulted spec = %+v, want %+v", d.Spec, want)
	}
	set := storagev1.CSIDriverSpec{AttachRequired: ptr.To(false), PodInfoOnMount: ptr.To(true), StorageCapacity: ptr.To(true),
		FSGroupPolicy: ptr.To(storagev1.NoneFSGroupPolicy), RequiresRepublish: ptr.To(true), SELinuxMount: ptr.To(true),
		VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecycleEphemeral}, PreventPodSchedulingIfMissing: ptr.To(true)}
	kept := &storagev1.CSIDriver{Spec: *set.DeepCopy()}
	resourceFor(t, kept).Default(kept)
	if !reflect.DeepEqual(kept.Spec, set) {
		t.Errorf("defaulted set spec = %+v, want it kept", kept.Spec)
	}
	off := &storagev1.CSIDriver{}
	defaultCSIDriver(off, gatesOff{gateSELinuxMount: true, gateVolumeLimitScaling: true})
	if off.Spec.SELinuxMount != nil || off.Spec.PreventPodSchedulingIfMissing != nil {
		t.Errorf("defaulted with gates off: seLinuxMount %v, preventPodSchedulingIfMissing %v; want both unset",
			off.Spec.SELinuxMount, off.Spec.PreventPodSchedulingIfMissing)
	}
}

// gatesOff has the named gates off and every other at its default.
type gatesOff map[string]bool

func (g gatesOff) Enabled(name string) bool { return !g[name] && defaultGates{}.Enabled(name) }

func TestDropDisabledCSIDriverFields(t *testing.T) {
	all := gatesOff{gateSELinuxMount: true, gateMutableAllocatable: true, gateTokenSecrets: true, gateVolumeLimitScaling: true}
	full := storagev1.CSIDriverSpec{SELinuxMount: ptr.To(true), NodeAllocatableUpdatePeriodSeconds: ptr.To[int64](10),
		ServiceAccountTokenInSecrets: ptr.To(true), PreventPodSchedulingIfMissing: ptr.To(true)}
	created := full.DeepCopy()
	dropDisabledCSIDriverFields(created, nil, all)
	if !reflect.DeepEqual(*created, storagev1.CSIDriverSpec{}) {
		t.Errorf("create with gates off kept %+v, want nothing", created)
	}
	updated := full.DeepCopy()
	dropDisabledCSIDriverFields(updated, &full, all)
	if !reflect.DeepEqual(*updated, full) {
		t.Errorf("update of a spec using them, gates off: %+v, want kept", updated)
	}
	atDefaults := full.DeepCopy()
	dropDisabledCSIDriverFields(atDefaults, nil, defaultGates{})
	if !reflect.DeepEqual(*atDefaults, full) {
		t.Errorf("create at default gates: %+v, want kept", atDefaults)
	}
}

func csiDriver(edit func(s *storagev1.CSIDriverSpec)) *storagev1.CSIDriver {
	d := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "foo.csi.k8s.io", ResourceVersion: "1"}}
	if edit != nil {
		edit(&d.Spec)
	}
	return d
}

func TestValidateCSIDriver(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		edit       func(s *storagev1.CSIDriverSpec)
	}{
		{"defaults", "", nil},
		{"bad fsGroupPolicy", `spec.fsGroupPolicy: Unsupported value: "invalid-mode": supported values: "File", "None", "ReadWriteOnceWithFSType"`,
			func(s *storagev1.CSIDriverSpec) { s.FSGroupPolicy = ptr.To[storagev1.FSGroupPolicy]("invalid-mode") }},
		{"bad mode", `spec.volumeLifecycleModes: Unsupported value: "no-such-mode": supported values: "Persistent", "Ephemeral"`,
			func(s *storagev1.CSIDriverSpec) {
				s.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{"no-such-mode"}
			}},
		{"token requests", `[spec.tokenRequests[1].audience: Duplicate value: "a", spec.tokenRequests[2].expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes, spec.tokenRequests[3].expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds]`,
			func(s *storagev1.CSIDriverSpec) {
				s.TokenRequests = []storagev1.TokenRequest{{Audience: "a"}, {Audience: "a", ExpirationSeconds: ptr.To[int64](1)},
					{Audience: "b", ExpirationSeconds: ptr.To[int64](599)}, {Audience: "c", ExpirationSeconds: ptr.To[int64](1<<32 + 1)}}
				s.ServiceAccountTokenInSecrets = ptr.To(true)
			}},
		{"secrets without requests", "spec.serviceAccountTokenInSecrets: Invalid value: false: serviceAccountTokenInSecrets is set but no tokenRequests are specified",
			func(s *storagev1.CSIDriverSpec) { s.ServiceAccountTokenInSecrets = ptr.To(false) }},
		{"short update period", "spec.nodeAllocatableUpdatePeriodSeconds: Invalid value: 9: must be greater than or equal to 10 seconds",
			func(s *storagev1.CSIDriverSpec) { s.NodeAllocatableUpdatePeriodSeconds = ptr.To[int64](9) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(createErrors(t, csiDriver(tc.edit))); got != tc.want {
				t.Errorf("create errors = %s, want %s", got, tc.want)
			}
		})
	}
	undefaulted := csiDriver(nil)
	want := "[spec.attachedRequired: Required value, spec.podInfoOnMount: Required value, spec.storageCapacity: Required value, " +
		"spec.seLinuxMount: Required value, spec.preventPodSchedulingIfMissing: Required value]"
	if got := aggregate(resourceFor(t, undefaulted).ValidateNew(undefaulted)); got != want {
		t.Errorf("undefaulted create errors = %s, want %s", got, want)
	}
}

func TestCSIDriverUpdate(t *testing.T) {
	old := csiDriver(nil)
	r := resourceFor(t, old)
	r.Default(old)
	old.Generation = 4
	changed := old.DeepCopy()
	changed.Spec.AttachRequired = ptr.To(false)
	changed.Spec.VolumeLifecycleModes = append(changed.Spec.VolumeLifecycleModes, storagev1.VolumeLifecycleEphemeral)
	changed.Spec.TokenRequests = []storagev1.TokenRequest{{Audience: "a"}}
	want := `[spec.attachedRequired: Invalid value: false: field is immutable, spec.volumeLifecycleModes: Invalid value: ["Persistent","Ephemeral"]: field is immutable]`
	if got := aggregate(PrepareUpdate(r, changed, old)); got != want || changed.Generation != 5 {
		t.Errorf("update errors = %s, generation %d; want %s, 5", got, changed.Generation, want)
	}
	if w := r.Warnings(changed, old); !reflect.DeepEqual(w, []string{tokenInSecretsRecommend}) {
		t.Errorf("warnings = %q, want the serviceAccountTokenInSecrets recommendation", w)
	}
	relabelled := changed.DeepCopy()
	relabelled.Labels = map[string]string{"a": "b"}
	PrepareForUpdate(r, "", relabelled, changed)
	if relabelled.Generation != 5 || r.Warnings(relabelled, changed) != nil {
		t.Errorf("relabel: generation %d, warnings %q; want 5, none", relabelled.Generation, r.Warnings(relabelled, changed))
	}
}

func csiNode(drivers ...storagev1.CSINodeDriver) *storagev1.CSINode {
	return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "node-1", ResourceVersion: "1"}, Spec: storagev1.CSINodeSpec{Drivers: drivers}}
}

func TestValidateCSINode(t *testing.T) {
	ok := storagev1.CSINodeDriver{Name: "io.kubernetes.storage.csi.driver", NodeID: "node", TopologyKeys: []string{"company.com/zone1"}}
	long := strings.Repeat("x", 257)
	for _, tc := range []struct {
		name string
		node *storagev1.CSINode
		want string
	}{
		{"valid", csiNode(ok), ""},
		{"no name", csiNode(storagev1.CSINodeDriver{NodeID: "n"}), "spec.drivers[0].name: Required value"},
		{"capital name", csiNode(storagev1.CSINodeDriver{Name: "IO.Driver", NodeID: "n"}), ""},
		{"bad name", csiNode(storagev1.CSINodeDriver{Name: "io/driver", NodeID: "n"}),
			`spec.drivers[0].name: Invalid value: "io/driver": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"node IDs", csiNode(storagev1.CSINodeDriver{Name: "a"}, storagev1.CSINodeDriver{Name: "b", NodeID: long}),
			"[spec.drivers[0].nodeID: Required value, spec.drivers[1].nodeID: Invalid value: \"" + long + "\": must be 256 characters or less]"},
		{"negative count", csiNode(storagev1.CSINodeDriver{Name: "a", NodeID: "n", Allocatable: &storagev1.VolumeNodeResources{Count: ptr.To[int32](-1)}}),
			"spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0"},
		{"duplicates", csiNode(ok, storagev1.CSINodeDriver{Name: ok.Name, NodeID: "n", TopologyKeys: []string{"", "k", "k"}}),
			`[spec.drivers[1].name: Duplicate value: "io.kubernetes.storage.csi.driver", spec.drivers[1]: Required value, spec.drivers[1]: Invalid value: "": name part must be non-empty, spec.drivers[1]: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), spec.drivers[1]: Duplicate value: "k"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(createErrors(t, tc.node)); got != tc.want {
				t.Errorf("create errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestCSINodeWrites(t *testing.T) {
	driver := storagev1.CSINodeDriver{Name: "d", NodeID: "n", Allocatable: &storagev1.VolumeNodeResources{Count: ptr.To[int32](1)}}
	n := csiNode(driver)
	n.Status.StorageHealth = []storagev1.StorageHealth{{Name: "d"}}
	r := resourceFor(t, n)
	if errs := createErrors(t, n); len(errs) > 0 || n.Status.StorageHealth != nil || n.Generation != 0 {
		t.Fatalf("create: errors %v, status %+v, generation %d; want none, empty, 0", errs, n.Status, n.Generation)
	}
	counted := n.DeepCopy()
	counted.Spec.Drivers[0].Allocatable.Count = ptr.To[int32](7)
	if errs := PrepareUpdate(r, counted, n); len(errs) > 0 {
		t.Errorf("allocatable count change: %v, want allowed", errs)
	}
	moved := n.DeepCopy()
	moved.Spec.Drivers[0].NodeID = "m"
	moved.Spec.Drivers[0].TopologyKeys = []string{}
	want := `spec.drivers: Invalid value: {"Name":"d","NodeID":"m","TopologyKeys":[],"Allocatable":null}: field is immutable`
	if got := aggregate(PrepareUpdate(r, moved, n)); got != want {
		t.Errorf("node ID change: %s, want %s", got, want)
	}

	status := n.DeepCopy()
	status.Labels = map[string]string{"a": "b"}
	status.Spec.Drivers = nil
	status.Status.StorageHealth = []storagev1.StorageHealth{{Name: "d"}}
	out := PrepareForUpdate(r, "status", status, n).(*storagev1.CSINode)
	if out.Labels != nil || len(out.Spec.Drivers) != 1 || out.Status.StorageHealth != nil {
		t.Errorf("status write with CSIVolumeHealth off kept %+v, want old labels and spec, no storage health", out)
	}
	stored := n.DeepCopy()
	stored.Status.StorageHealth = []storagev1.StorageHealth{{Name: "d"}}
	bad := stored.DeepCopy()
	bad.Status.StorageHealth = []storagev1.StorageHealth{{Name: "d", HealthConditions: []storagev1.StorageHealthCondition{{Status: "Odd",
		AccessMode: ptr.To(corev1.PersistentVolumeAccessMode("x")), VolumeMode: ptr.To(corev1.PersistentVolumeMode("y"))}}}, {Name: "d"}}
	out = PrepareForUpdate(r, "status", bad, stored).(*storagev1.CSINode)
	want = `[status.storageHealth[0].healthConditions[0].status: Unsupported value: "Odd": supported values: "StorageDegraded", "StorageUnreachable", ` +
		`status.storageHealth[0].healthConditions[0].reason: Required value, ` +
		`status.storageHealth[0].healthConditions[0].accessMode: Unsupported value: "x": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod", ` +
		`status.storageHealth[0].healthConditions[0].volumeMode: Unsupported value: "y": supported values: "Filesystem", "Block", ` +
		`status.storageHealth[1]: Duplicate value: "d"]`
	if got := aggregate(r.ValidateSubresourceChange("status", out, stored)); got != want {
		t.Errorf("status errors =\n%s\nwant\n%s", got, want)
	}
}

func TestCSIStorageCapacity(t *testing.T) {
	c := &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default", ResourceVersion: "1"},
		StorageClassName: "Bad_Class", Capacity: ptr.To(resource.MustParse("-1Gi")), MaximumVolumeSize: ptr.To(resource.MustParse("-1")),
		NodeTopology: &metav1.LabelSelector{MatchLabels: map[string]string{"failure-domain.beta.kubernetes.io/zone": "a"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "beta.kubernetes.io/os", Operator: metav1.LabelSelectorOpExists}}}}
	r := resourceFor(t, c)
	want := `[storageClassName: Invalid value: "Bad_Class": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), capacity: Invalid value: "-1Gi": must be greater than or equal to 0]`
	if got := aggregate(createErrors(t, c)); got != want {
		t.Errorf("create errors =\n%s\nwant\n%s", got, want)
	}
	warnings := []string{`nodeTopology.matchExpressions[0].key: beta.kubernetes.io/os is deprecated since v1.14; use "kubernetes.io/os" instead`,
		`nodeTopology.matchLabels.failure-domain.beta.kubernetes.io/zone: deprecated since v1.17; use "topology.kubernetes.io/zone" instead`}
	if got := r.Warnings(c, nil); !reflect.DeepEqual(got, warnings) {
		t.Errorf("warnings = %q, want %q", got, warnings)
	}

	stored := c.DeepCopy()
	stored.StorageClassName, stored.Capacity = "class", nil
	stored.NodeTopology = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "zone",
		Operator: metav1.LabelSelectorOpIn, Values: []string{"not valid"}}}}
	same := stored.DeepCopy()
	if errs := PrepareUpdate(r, same, stored); len(errs) > 0 {
		t.Errorf("update keeping a selector no longer valid: %v, want allowed", errs)
	}
	moved := stored.DeepCopy()
	moved.StorageClassName = "other"
	moved.NodeTopology = nil
	want = `[nodeTopology: Invalid value: null: field is immutable, storageClassName: Invalid value: "other": field is immutable]`
	if got := aggregate(PrepareUpdate(r, moved, stored)); got != want {
		t.Errorf("update errors = %s, want %s", got, want)
	}
}
