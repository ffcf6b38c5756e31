package controllers

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

var replicaSetKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")

func claimPod(name string, labels map[string]string, owner *metav1.OwnerReference) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid"), Labels: labels}}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return p
}

// refTest is a manager for a ReplicaSet "rs" selecting app=web, whose
// server answers fresh for the owner and patchErr for the named pods,
// and records the patches and reads.
type refTest struct {
	m       *ControllerRefManager[*corev1.Pod]
	patches map[string]string
	gets    int
}

func newRefTest(owner *appsv1.ReplicaSet, fresh *appsv1.ReplicaSet, patchErr map[string]error) *refTest {
	rt := &refTest{patches: map[string]string{}}
	rt.m = &ControllerRefManager[*corev1.Pod]{Owner: owner, OwnerKind: replicaSetKind, Kind: "Pod",
		Selector: labels.SelectorFromSet(labels.Set{"app": "web"}),
		Get: func(context.Context) (metav1.Object, error) {
			rt.gets++
			if fresh == nil {
				return nil, apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "replicasets"}, owner.Name)
			}
			return fresh, nil
		},
		Patch: func(_ context.Context, p *corev1.Pod, body []byte) error {
			rt.patches[p.Name] = string(body)
			return patchErr[p.Name]
		}}
	return rt
}

func names(pods []*corev1.Pod) string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return strings.Join(out, ",")
}

func TestControllerRefManagerClaim(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rs", UID: "rs-uid"}}
	mine := metav1.NewControllerRef(rs, replicaSetKind)
	other := &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "other", UID: "other-uid", Controller: ptr.To(true)}
	web := map[string]string{"app": "web"}
	deleting := claimPod("orphan-deleting", web, nil)
	deleting.DeletionTimestamp = &metav1.Time{}
	elsewhere := claimPod("orphan-elsewhere", web, nil)
	elsewhere.Namespace = "other"
	pods := []*corev1.Pod{
		claimPod("others", web, other),
		claimPod("owned", web, mine),
		claimPod("owned-unmatched", map[string]string{"app": "db"}, mine),
		claimPod("owned-gone", nil, mine),
		claimPod("orphan", web, nil),
		claimPod("orphan-gone", web, nil),
		claimPod("orphan-2", web, nil),
		claimPod("orphan-unmatched", nil, nil),
		deleting, elsewhere,
	}
	gone := apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "")
	rt := newRefTest(rs, rs, map[string]error{"owned-gone": gone, "orphan-gone": gone})
	claimed, err := rt.m.Claim(context.Background(), pods)
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	if got, want := names(claimed), "owned,orphan,orphan-2"; got != want {
		t.Errorf("claimed %s, want %s", got, want)
	}
	if rt.gets != 1 {
		t.Errorf("the owner was read %d times for adoptions, want once", rt.gets)
	}
	want := map[string]string{
		"owned-unmatched": `{"metadata":{"ownerReferences":[{"$patch":"delete","uid":"rs-uid"}],"uid":"owned-unmatched-uid"}}`,
		"owned-gone":      `{"metadata":{"ownerReferences":[{"$patch":"delete","uid":"rs-uid"}],"uid":"owned-gone-uid"}}`,
		"orphan":          `{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"rs-uid","controller":true,"blockOwnerDeletion":true}],"uid":"orphan-uid"}}`,
	}
	for name, body := range want {
		if rt.patches[name] != body {
			t.Errorf("patch of %s = %s, want %s", name, rt.patches[name], body)
		}
	}
	if len(rt.patches) != 5 {
		t.Errorf("patched %d pods (%v), want 5: 2 released, 3 adopted", len(rt.patches), rt.patches)
	}
}

func TestControllerRefManagerRefusesAdoptionUnlessTheServerConfirmsTheOwner(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rs", UID: "rs-uid"}}
	replaced := rs.DeepCopy()
	replaced.UID = "new-uid"
	beingDeleted := rs.DeepCopy()
	beingDeleted.DeletionTimestamp = &metav1.Time{}
	for _, tc := range []struct {
		name  string
		fresh *appsv1.ReplicaSet
		want  string
	}{
		{"gone", nil, `can't adopt Pod ns/a (a-uid): can't recheck DeletionTimestamp: replicasets.apps "rs" not found`},
		{"replaced", replaced, "can't adopt Pod ns/a (a-uid): can't recheck DeletionTimestamp: original ReplicaSet ns/rs is gone: got uid new-uid, wanted rs-uid"},
		{"being deleted", beingDeleted, "can't adopt Pod ns/a (a-uid): ns/rs has just been deleted at"},
	} {
		rt := newRefTest(rs, tc.fresh, nil)
		pods := []*corev1.Pod{claimPod("a", map[string]string{"app": "web"}, nil), claimPod("b", map[string]string{"app": "web"}, nil)}
		claimed, err := rt.m.Claim(context.Background(), pods)
		if len(claimed) != 0 || len(rt.patches) != 0 || rt.gets != 1 {
			t.Errorf("%s: claimed %q, patched %v, read the owner %d times; want nothing claimed or patched, one read", tc.name, names(claimed), rt.patches, rt.gets)
		}
		if err == nil || !strings.HasPrefix(err.Error(), "["+tc.want) {
			t.Errorf("%s: Claim error = %v, want it to start with [%s", tc.name, err, tc.want)
		}
	}
	deletedOwner := rs.DeepCopy()
	deletedOwner.DeletionTimestamp = &metav1.Time{}
	rt := newRefTest(deletedOwner, deletedOwner, nil)
	pods := []*corev1.Pod{claimPod("orphan", map[string]string{"app": "web"}, nil),
		claimPod("owned-unmatched", nil, metav1.NewControllerRef(rs, replicaSetKind))}
	if claimed, err := rt.m.Claim(context.Background(), pods); len(claimed) != 0 || err != nil || len(rt.patches) != 0 || rt.gets != 0 {
		t.Errorf("owner being deleted: claimed %q, %v, patched %v, %d reads; want nothing done", names(claimed), err, rt.patches, rt.gets)
	}
}

func TestControllerRefManagerFinalizers(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rs", UID: "rs-uid"}}
	rt := newRefTest(rs, rs, map[string]error{"released": apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "released", nil)})
	rt.m.Finalizers = []string{"batch.kubernetes.io/job-tracking"}
	pods := []*corev1.Pod{claimPod("adopted", map[string]string{"app": "web"}, nil),
		claimPod("released", nil, metav1.NewControllerRef(rs, replicaSetKind))}
	if _, err := rt.m.Claim(context.Background(), pods); err != nil {
		t.Fatalf("Claim: %v (an invalid release patch is let go)", err)
	}
	if got := rt.patches["adopted"]; !strings.Contains(got, `"finalizers":["batch.kubernetes.io/job-tracking"]`) {
		t.Errorf("adoption patch %s has no finalizers", got)
	}
	if got := rt.patches["released"]; !strings.Contains(got, `"$deleteFromPrimitiveList/finalizers":["batch.kubernetes.io/job-tracking"]`) {
		t.Errorf("release patch %s removes no finalizers", got)
	}
}
