// Package statefulset compares admitd's StatefulSet controller
// (internal/controllers/statefulset) with upstream's
// pkg/controller/statefulset on the same inputs: the revision hash,
// ApplyRevision, and what upstream's controller creates on a set's first
// sync (its ControllerRevision: name, labels, data; its pods: name,
// labels, hostname, subdomain, volumes, owner; its claims: names, labels)
// against what ours makes of the same set.
package statefulset

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/controller/history"
	upstream "k8s.io/kubernetes/pkg/controller/statefulset"
	"k8s.io/utils/ptr"

	ours "github.com/admitd/admitd/internal/controllers/statefulset"
)

// randomSet is a Parallel set (so upstream's first sync creates every pod)
// with random name, replicas, start ordinal, template labels,
// annotations and containers, claim templates and strategy.
func randomSet(r *rand.Rand, i int) *appsv1.StatefulSet {
	name := []string{"web", "db-main", "a", "x-1"}[r.IntN(4)]
	sel := map[string]string{"app": name}
	tmplLabels := map[string]string{"app": name}
	if r.IntN(2) == 0 {
		tmplLabels["tier"] = []string{"front", "back"}[r.IntN(2)]
	}
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(fmt.Sprintf("uid-%d", i)),
		Annotations: map[string]string{}},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(r.IntN(5))), ServiceName: []string{"", "svc", name}[r.IntN(3)],
			Selector: &metav1.LabelSelector{MatchLabels: sel}, PodManagementPolicy: appsv1.ParallelPodManagement,
			RevisionHistoryLimit: ptr.To[int32](10),
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To(int32(r.IntN(3)))}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: tmplLabels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "c", Image: []string{"nginx", "nginx:1.27", "busybox"}[r.IntN(3)],
					Args: []string{"--x=<&>", "ü"}[:r.IntN(3)]}},
				TerminationGracePeriodSeconds: ptr.To(int64(r.IntN(40))), DNSPolicy: corev1.DNSClusterFirst}}}}
	if r.IntN(2) == 0 {
		set.Annotations["kubectl.kubernetes.io/last-applied"] = "{}"
		set.Spec.Template.Annotations = map[string]string{"a": "b"}
	}
	if r.IntN(2) == 0 {
		set.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: int32(r.IntN(4))}
	}
	if r.IntN(3) == 0 {
		set.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "www", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	}
	for j := range r.IntN(3) {
		claim := corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: []string{"www", "data"}[j]},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
		if r.IntN(2) == 0 {
			claim.Labels = map[string]string{"kind": "disk"}
		}
		set.Spec.VolumeClaimTemplates = append(set.Spec.VolumeClaimTemplates, claim)
	}
	return set
}

// created are the objects upstream's controller created on the set's
// first sync, by kind and name.
type created struct {
	revisions []*appsv1.ControllerRevision
	pods      map[string]*corev1.Pod
	claims    map[string]*corev1.PersistentVolumeClaim
}

// runUpstream runs upstream's controller over a fake clientset holding the
// set until it has created the set's pods (or 5s).
func runUpstream(t *testing.T, set *appsv1.StatefulSet) created {
	client := fake.NewClientset(set)
	factory := informers.NewSharedInformerFactory(client, 0)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ssc := upstream.NewStatefulSetController(ctx, factory.Core().V1().Pods(), factory.Apps().V1().StatefulSets(),
		factory.Core().V1().PersistentVolumeClaims(), factory.Apps().V1().ControllerRevisions(), client)
	factory.Start(ctx.Done())
	go ssc.Run(ctx, 1)
	out := created{pods: map[string]*corev1.Pod{}, claims: map[string]*corev1.PersistentVolumeClaim{}}
	want := int(*set.Spec.Replicas)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		out = created{pods: map[string]*corev1.Pod{}, claims: map[string]*corev1.PersistentVolumeClaim{}}
		for _, a := range client.Actions() {
			c, ok := a.(k8stesting.CreateAction)
			if !ok {
				continue
			}
			switch obj := c.GetObject().(type) {
			case *appsv1.ControllerRevision:
				out.revisions = append(out.revisions, obj)
			case *corev1.Pod:
				out.pods[obj.Name] = obj
			case *corev1.PersistentVolumeClaim:
				out.claims[obj.Name] = obj
			}
		}
		if len(out.revisions) > 0 && len(out.pods) == want && len(out.claims) == want*len(set.Spec.VolumeClaimTemplates) {
			break
		}
	}
	return out
}

// normalized sorts a pod's volumes by name (upstream orders its claim
// volumes by map iteration) and drops the type and managedFields the fake
// clientset's tracker may have added to the object created.
func normalized(p *corev1.Pod) *corev1.Pod {
	if p == nil {
		return nil
	}
	p = p.DeepCopy()
	p.TypeMeta, p.ManagedFields = metav1.TypeMeta{}, nil
	slices.SortFunc(p.Spec.Volumes, func(a, b corev1.Volume) int { return strings.Compare(a.Name, b.Name) })
	return p
}

// 300 random sets: upstream's first sync and ours create the same
// revision, pods and claims.
func TestFirstSyncCreatesWhatUpstreamDoes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 37))
	var pods, claims int
	for i := range 300 {
		set := randomSet(r, i)
		up := runUpstream(t, set)
		if len(up.revisions) == 0 {
			t.Fatalf("set %d: upstream created no revision", i)
		}
		rev, err := ours.NewRevision(set, 1, ptr.To[int32](0))
		if err != nil {
			t.Fatal(err)
		}
		upRev := up.revisions[0].DeepCopy()
		upRev.TypeMeta, upRev.ManagedFields = metav1.TypeMeta{}, nil
		if d := cmp.Diff(upRev, rev); d != "" {
			t.Errorf("set %d: revision (-upstream +ours):\n%s", i, d)
		}
		if len(up.pods) != int(*set.Spec.Replicas) {
			t.Errorf("set %d: upstream created %d pods, want %d", i, len(up.pods), *set.Spec.Replicas)
		}
		revSet, err := ours.ApplyRevision(set, rev)
		if err != nil {
			t.Fatal(err)
		}
		for ord := ours.StartOrdinal(set); ord <= ours.EndOrdinal(set); ord++ {
			pod := ours.NewVersionedPod(revSet, revSet, rev.Name, rev.Name, ord)
			if d := cmp.Diff(normalized(up.pods[pod.Name]), normalized(pod)); d != "" {
				t.Errorf("set %d: pod %s (-upstream +ours):\n%s", i, pod.Name, d)
			}
			pods++
			for _, claim := range ours.Claims(set, pod) {
				upClaim := up.claims[claim.Name]
				if upClaim != nil {
					upClaim = upClaim.DeepCopy()
					upClaim.TypeMeta, upClaim.ManagedFields = metav1.TypeMeta{}, nil
				}
				if d := cmp.Diff(upClaim, &claim); d != "" {
					t.Errorf("set %d: claim %s (-upstream +ours):\n%s", i, claim.Name, d)
				}
				claims++
			}
		}
	}
	t.Logf("300 sets, %d pods, %d claims compared", pods, claims)
}

// The revision hash of random data and collision counts, and
// ApplyRevision of random sets and revisions, equal upstream's.
func TestHashAndApplyRevision(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 37))
	for range 2000 {
		data := make([]byte, r.IntN(200))
		for j := range data {
			data[j] = byte(r.IntN(256))
		}
		var probe *int32
		if r.IntN(4) > 0 {
			probe = ptr.To(int32(r.IntN(1000)))
		}
		cr := &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: data}}
		if got, want := ours.HashRevision(data, probe), history.HashControllerRevision(cr, probe); got != want {
			t.Fatalf("HashRevision(%x, %v) = %s, want %s", data, probe, got, want)
		}
	}
	for i := range 300 {
		set, other := randomSet(r, i), randomSet(r, i+1)
		rev, err := ours.NewRevision(other, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ours.ApplyRevision(set, rev)
		if err != nil {
			t.Fatal(err)
		}
		want, err := upstream.ApplyRevision(set, rev)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("ApplyRevision %d (-upstream +ours):\n%s", i, d)
		}
	}
}
