package registry

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func nodeNamed(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}}
}

func errorLines(errs field.ErrorList) string {
	var lines []string
	for _, e := range errs {
		lines = append(lines, e.Error())
	}
	return strings.Join(lines, "\n")
}

// Node creates are checked as kube-apiserver 1.37.2's ValidateNode (the
// differential test test/upstream/nodevalidation compares thousands of
// writes; these are a few for the reader).
func TestNodeValidation(t *testing.T) {
	taints := nodeNamed("n1")
	taints.Spec.Taints = []corev1.Taint{{Key: "bad key!", Effect: "NoSchedule"}, {Key: "a", Effect: ""},
		{Key: "a", Effect: "Bogus"}, {Key: "b", Effect: "NoSchedule"}, {Key: "b", Effect: "NoSchedule"}}
	resources := nodeNamed("n1")
	resources.Status.Capacity = corev1.ResourceList{"pods": resource.MustParse("1.5"), "cpu": resource.MustParse("-1"), "example.com/gpu": resource.MustParse("500m")}
	cidrs := nodeNamed("n1")
	cidrs.Spec.PodCIDRs = []string{"10.0.0.0/24", "10.1.0.0/24", "010.2.0.0/24"}
	features := nodeNamed("n1")
	features.Status.DeclaredFeatures = []string{"B", "A", "A", "lower"}
	annotations := nodeNamed("n1")
	annotations.Annotations = map[string]string{"scheduler.alpha.kubernetes.io/taints": `{"key":1}`,
		"scheduler.alpha.kubernetes.io/preferAvoidPods": `{"preferAvoidPods":[{"podSignature":{}}]}`}
	configSource := nodeNamed("n1")
	configSource.Spec.ConfigSource = &corev1.NodeConfigSource{}
	configSource.Status.Config = &corev1.NodeConfigStatus{Assigned: &corev1.NodeConfigSource{}}
	for _, tc := range []struct {
		name string
		node *corev1.Node
		want string
	}{
		{"taints", taints, `metadata.taints[0].key: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')
metadata.taints[1].effect: Required value
metadata.taints[2].effect: Unsupported value: "Bogus": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"
metadata.taints[4]: Duplicate value: {"Key":"b","Value":"","Effect":"NoSchedule","TimeAdded":null}: taints must be unique by key and effect pair`},
		{"resources, in name order (allocatable defaults to capacity)", resources, `status.capacity.cpu: Invalid value: "-1": must be greater than or equal to 0
status.capacity.example.com/gpu: Invalid value: "500m": must be an integer
status.capacity.pods: Invalid value: "1500m": must be an integer
status.allocatable.cpu: Invalid value: "-1": must be greater than or equal to 0
status.allocatable.example.com/gpu: Invalid value: "500m": must be an integer
status.allocatable.pods: Invalid value: "1500m": must be an integer`},
		{"pod CIDRs", cidrs, `spec.podCIDRs[2]: Invalid value: "010.2.0.0/24": must not have leading 0s in IP or prefix length
spec.podCIDRs: Invalid value: ["10.0.0.0/24","10.1.0.0/24","010.2.0.0/24"]: may specify no more than one CIDR for each IP family`},
		{"declared features", features, `status.declaredFeatures[1]: Invalid value: "A": list must be sorted alphabetically
status.declaredFeatures[2]: Duplicate value: "A"
status.declaredFeatures[3]: Invalid value: "lower": invalid feature name "lower": must start with an UpperCamelCase segment, with subsequent segments separated by '/' (e.g., MyFeature or MyFeature/mySubFeature), and contain only alphanumeric characters and slashes`},
		{"scheduler annotations, decoded as upstream's internal types", annotations, `metadata.annotations: Invalid value: "scheduler.alpha.kubernetes.io/taints": json: cannot unmarshal object into Go value of type []core.Taint
metadata.annotations.scheduler.alpha.kubernetes.io/preferAvoidPods[0].PodSignature: Required value`},
		{"a create drops the config source and its status", configSource, ""},
		{"valid", nodeNamed("n1"), ""},
	} {
		if got := errorLines(createErrors(t, tc.node)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// A Node update keeps its pod CIDRs, providerID and external ID once set,
// and reports what ValidateNode and ValidateNodeUpdate both find once.
func TestNodeUpdateValidation(t *testing.T) {
	old := nodeNamed("n1")
	old.Spec.PodCIDRs, old.Spec.PodCIDR, old.Spec.ProviderID = []string{"10.0.0.0/24"}, "10.0.0.0/24", "kind://n1"
	old.Status.Capacity = corev1.ResourceList{"pods": resource.MustParse("-1")}
	changed := old.DeepCopy()
	changed.Spec.PodCIDRs, changed.Spec.PodCIDR, changed.Spec.ProviderID, changed.Spec.DoNotUseExternalID = []string{"10.1.0.0/24"}, "10.1.0.0/24", "", "x"
	want := `status.capacity.pods: Invalid value: "-1": must be greater than or equal to 0
spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid
spec.providerID: Invalid value: null: field cannot be cleared once set
spec.externalID: Forbidden: may not be updated`
	r := resourceFor(t, changed)
	if got := errorLines(r.ValidateChange(PrepareForUpdate(r, "", changed, old), old)); got != want {
		t.Errorf("update:\n got %s\nwant %s", got, want)
	}
	assigned := nodeNamed("n1")
	withCIDR := assigned.DeepCopy()
	withCIDR.Spec.PodCIDRs, withCIDR.Spec.PodCIDR, withCIDR.Spec.ProviderID = []string{"10.0.0.0/24"}, "10.0.0.0/24", "kind://n1"
	if errs := r.ValidateChange(PrepareForUpdate(r, "", withCIDR, assigned), assigned); len(errs) > 0 {
		t.Errorf("first pod CIDR and providerID: %v, want none", errs)
	}
}

// A nodes/status write is checked by ValidateNodeUpdate alone: the stored
// spec's pod CIDRs are not checked again, its status is.
func TestNodeStatusValidation(t *testing.T) {
	old := nodeNamed("n1")
	old.Spec.PodCIDRs = []string{"010.0.0.0/24"}
	write := old.DeepCopy()
	write.Status.Addresses = []corev1.NodeAddress{{Type: "InternalIP", Address: "10.0.0.1"}, {Type: "InternalIP", Address: "10.0.0.1"}}
	write.Status.Config = &corev1.NodeConfigStatus{Error: "kept only when stored"}
	r := resourceFor(t, write)
	prepared := PrepareForUpdate(r, "status", write, old).(*corev1.Node)
	want := `status.addresses[1]: Duplicate value: {"Type":"InternalIP","Address":"10.0.0.1"}`
	if got := errorLines(r.ValidateSubresourceChange("status", prepared, old)); got != want {
		t.Errorf("status write:\n got %s\nwant %s", got, want)
	}
	if prepared.Status.Config != nil {
		t.Errorf("status.config = %v, want it dropped (none stored)", prepared.Status.Config)
	}
}
