package statefulset

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func webSet(replicas int32) *appsv1.StatefulSet {
	labels := map[string]string{"app": "web"}
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "set-uid"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(replicas), ServiceName: "web",
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "www"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: apiresource.MustParse("1Gi")}}}}},
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](0)}}}}
}

func TestParentAndOrdinal(t *testing.T) {
	for _, tc := range []struct {
		name, parent string
		ordinal      int
	}{
		{"web-0", "web", 0}, {"web-12", "web", 12}, {"my-web-3", "my-web", 3}, {"web", "", -1},
		{"web-", "", -1}, {"web-x", "", -1}, {"web-99999999999", "web", -1}, {"-1", "", 1},
	} {
		parent, ord := ParentAndOrdinal(tc.name)
		if parent != tc.parent || ord != tc.ordinal {
			t.Errorf("ParentAndOrdinal(%q) = %q, %d, want %q, %d", tc.name, parent, ord, tc.parent, tc.ordinal)
		}
	}
}

// A pod of ordinal 7 of a set starting at 5 is named web-7, with the
// identity labels, hostname, subdomain, its claim mounted, the template's
// labels and the set as controller.
func TestNewPodIdentity(t *testing.T) {
	set := webSet(3)
	set.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 5}
	set.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "www"}, {Name: "cache"}}
	pod := NewVersionedPod(set, set, "web-a", "web-b", 7)
	if pod.Name != "web-7" || pod.GenerateName != "web-" || pod.Spec.Hostname != "web-7" || pod.Spec.Subdomain != "web" {
		t.Errorf("pod name %q generateName %q hostname %q subdomain %q", pod.Name, pod.GenerateName, pod.Spec.Hostname, pod.Spec.Subdomain)
	}
	wantLabels := map[string]string{"app": "web", "apps.kubernetes.io/pod-index": "7",
		"statefulset.kubernetes.io/pod-name": "web-7", "controller-revision-hash": "web-b"}
	if !mapsEqual(pod.Labels, wantLabels) {
		t.Errorf("labels %v, want %v", pod.Labels, wantLabels)
	}
	var vols []string
	for _, v := range pod.Spec.Volumes {
		claim := ""
		if v.PersistentVolumeClaim != nil {
			claim = v.PersistentVolumeClaim.ClaimName
		}
		vols = append(vols, v.Name+"="+claim)
	}
	if want := []string{"www=www-web-7", "cache="}; !slices.Equal(vols, want) {
		t.Errorf("volumes %v, want %v", vols, want)
	}
	if ref := metav1.GetControllerOf(pod); ref == nil || ref.Kind != "StatefulSet" || ref.UID != "set-uid" {
		t.Errorf("controller %+v", ref)
	}
	if !inOrdinalRange(pod, set) || EndOrdinal(set) != 7 {
		t.Errorf("ordinal 7 not in range 5..%d", EndOrdinal(set))
	}
}

// Below the partition a missing pod is made from the current revision,
// at and above it from the update revision.
func TestNewVersionedPodPartition(t *testing.T) {
	current, update := webSet(3), webSet(3)
	update.Spec.Template.Spec.Containers[0].Image = "nginx:1.27"
	current.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](2)
	for ord, want := range []string{"nginx", "nginx", "nginx:1.27"} {
		pod := NewVersionedPod(current, update, "cur", "upd", ord)
		if got := pod.Spec.Containers[0].Image; got != want {
			t.Errorf("pod %d image %s, want %s", ord, got, want)
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// The revisions kube-controller-manager 1.37.2 made for the e2e session's
// set (testdata, as stored): our hash of their data gives their names, and
// our patch of the defaulted set gives their data.
func TestRevisionsMatchKCM(t *testing.T) {
	raw, err := os.ReadFile("testdata/kcm-1.37.2-revisions.json")
	if err != nil {
		t.Fatal(err)
	}
	var recorded map[string]string
	if err := json.Unmarshal(raw, &recorded); err != nil {
		t.Fatal(err)
	}
	images := map[string]string{"web-7b7d6fd499": "nginx", "web-7bcf4c5c75": "nginx:1.27"}
	for name, data := range recorded {
		if got := RevisionName("web", HashRevision([]byte(data), ptr.To[int32](0))); got != name {
			t.Errorf("name of revision %s = %s", name, got)
		}
		set := defaultedWebSet(images[name])
		cr, err := NewRevision(set, 1, ptr.To[int32](0))
		if err != nil {
			t.Fatal(err)
		}
		if string(cr.Data.Raw) != data || cr.Name != name || cr.Labels[hashLabel] != strings.TrimPrefix(name, "web-") {
			t.Errorf("NewRevision = %s %v %s, want %s %s", cr.Name, cr.Labels, cr.Data.Raw, name, data)
		}
		back, err := ApplyRevision(webSet(2), cr)
		if err != nil || back.Spec.Template.Spec.Containers[0].Image != images[name] || *back.Spec.Replicas != 2 {
			t.Errorf("ApplyRevision: %v, %+v", err, back.Spec)
		}
	}
}

// defaultedWebSet is e2e's web.yaml as kube-apiserver stores it.
func defaultedWebSet(image string) *appsv1.StatefulSet {
	set := webSet(3)
	set.Spec.Template.Spec = corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: image,
		ImagePullPolicy: corev1.PullAlways, TerminationMessagePath: "/dev/termination-log",
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		VolumeMounts:             []corev1.VolumeMount{{Name: "www", MountPath: "/usr/share/nginx/html"}}}},
		DNSPolicy: corev1.DNSClusterFirst, RestartPolicy: corev1.RestartPolicyAlways, SchedulerName: "default-scheduler",
		SecurityContext: &corev1.PodSecurityContext{}, TerminationGracePeriodSeconds: ptr.To[int64](1)}
	return set
}

func TestMaxUnavailable(t *testing.T) {
	for _, tc := range []struct {
		v        *intstr.IntOrString
		replicas int
		want     int
	}{
		{nil, 5, 1}, {ptr.To(intstr.FromInt32(3)), 5, 3}, {ptr.To(intstr.FromString("50%")), 5, 2},
		{ptr.To(intstr.FromString("10%")), 5, 1}, {ptr.To(intstr.FromString("100%")), 4, 4},
	} {
		if got, err := MaxUnavailable(tc.v, tc.replicas); err != nil || got != tc.want {
			t.Errorf("MaxUnavailable(%v, %d) = %d, %v, want %d", tc.v, tc.replicas, got, err, tc.want)
		}
	}
}

// Claim owners by retention policy: in range the set owns them when they
// go with the set; scaled down the pod owns them when they go on scale
// down.
func TestClaimOwners(t *testing.T) {
	del, keep := appsv1.DeletePersistentVolumeClaimRetentionPolicyType, appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	for _, tc := range []struct {
		whenDeleted, whenScaled appsv1.PersistentVolumeClaimRetentionPolicyType
		ordinal                 int
		want                    string
	}{
		{keep, keep, 0, ""}, {del, keep, 0, "StatefulSet"}, {keep, del, 0, ""}, {keep, del, 5, "Pod"},
		{del, del, 0, "StatefulSet"}, {del, del, 5, "Pod"}, {del, keep, 5, "StatefulSet"},
	} {
		set := webSet(2)
		set.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenDeleted: tc.whenDeleted, WhenScaled: tc.whenScaled}
		pod := NewPod(set, tc.ordinal)
		pod.UID = "pod-uid"
		claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "www-web-0",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "x"}}}}
		SetClaimOwners(claim, set, pod)
		var kinds []string
		for _, r := range claim.OwnerReferences[1:] {
			kinds = append(kinds, r.Kind)
		}
		if got := strings.Join(kinds, ","); got != tc.want || !ClaimOwnersUpToDate(claim, set, pod) {
			t.Errorf("%s/%s ordinal %d: owners %q (up to date %v), want %q", tc.whenDeleted, tc.whenScaled, tc.ordinal, got, ClaimOwnersUpToDate(claim, set, pod), tc.want)
		}
	}
}

func intstrFromInt(n int32) intstr.IntOrString { return intstr.FromInt32(n) }
