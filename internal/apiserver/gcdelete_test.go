package apiserver

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/admitd/admitd/internal/registry"
)

func TestSetGCFinalizers(t *testing.T) {
	orphan, background, foreground := metav1.DeletePropagationOrphan, metav1.DeletePropagationBackground, metav1.DeletePropagationForeground
	yes, no := true, false
	plain := &registry.Resource{}
	orphaning := &registry.Resource{DefaultGCPolicy: registry.OrphanDependents}
	unsupported := &registry.Resource{DefaultGCPolicy: registry.GCUnsupported}
	for _, tc := range []struct {
		name     string
		res      *registry.Resource
		have     []string
		opts     metav1.DeleteOptions
		want     []string
		wantDiff bool
	}{
		{"default background", plain, nil, metav1.DeleteOptions{}, nil, false},
		{"default orphan", orphaning, nil, metav1.DeleteOptions{}, []string{"orphan"}, true},
		{"orphan", plain, []string{"x"}, metav1.DeleteOptions{PropagationPolicy: &orphan}, []string{"x", "orphan"}, true},
		{"foreground", plain, nil, metav1.DeleteOptions{PropagationPolicy: &foreground}, []string{"foregroundDeletion"}, true},
		{"background overrides the kind", orphaning, nil, metav1.DeleteOptions{PropagationPolicy: &background}, nil, false},
		{"background drops finalizers", plain, []string{"orphan", "x"}, metav1.DeleteOptions{PropagationPolicy: &background}, []string{"x"}, true},
		{"existing finalizer decides", orphaning, []string{"foregroundDeletion"}, metav1.DeleteOptions{}, []string{"foregroundDeletion"}, false},
		{"orphanDependents true", plain, nil, metav1.DeleteOptions{OrphanDependents: &yes}, []string{"orphan"}, true},
		{"orphanDependents false", orphaning, nil, metav1.DeleteOptions{OrphanDependents: &no}, nil, false},
		{"unsupported", unsupported, nil, metav1.DeleteOptions{PropagationPolicy: &orphan}, nil, false},
	} {
		m := &metav1.ObjectMeta{Finalizers: tc.have}
		changed := setGCFinalizers(tc.res, m, &tc.opts)
		if changed != tc.wantDiff || !reflect.DeepEqual(m.Finalizers, tc.want) {
			t.Errorf("%s: setGCFinalizers = %v, finalizers %v; want %v, %v", tc.name, changed, m.Finalizers, tc.wantDiff, tc.want)
		}
	}
}

func TestDeleteJobWarnsAndOrphans(t *testing.T) {
	ts := newTestServer(t)
	const jobs = "/apis/batch/v1/namespaces/default/jobs"
	job := func(name string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`
	}
	ts.must(201, "POST", jobs, "", job("a"))
	w := ts.do("DELETE", jobs+"/a", "", "")
	warnings, _ := utilnet.ParseWarningHeaders(w.Result().Header.Values("Warning"))
	if w.Code != 200 || len(warnings) != 1 || warnings[0].Text != jobDeleteWarning || !strings.Contains(w.Body.String(), `"finalizers":["orphan"]`) {
		t.Errorf("DELETE job = %d %s warnings %v, want 200 with the orphan finalizer and upstream's warning", w.Code, w.Body, warnings)
	}
	got := ts.must(200, "GET", jobs+"/a", "", "")
	if got.DeletionTimestamp == nil || got.Generation != 2 {
		t.Errorf("job marked for deletion: deletionTimestamp %v generation %d, want set and 2", got.DeletionTimestamp, got.Generation)
	}
	ts.must(201, "POST", jobs, "", job("b"))
	w = ts.do("DELETE", jobs+"/b?propagationPolicy=Background", "", "")
	if w.Code != 200 || len(w.Result().Header.Values("Warning")) != 0 {
		t.Errorf("DELETE job with Background = %d warnings %v, want 200 and no warning", w.Code, w.Result().Header.Values("Warning"))
	}
	// A second delete may still change the policy: Background drops the
	// orphan finalizer and the job goes at once.
	ts.must(200, "DELETE", jobs+"/a?propagationPolicy=Background", "", "")
	if w := ts.do("GET", jobs+"/a", "", ""); w.Code != 404 {
		t.Errorf("job after a Background re-delete: GET = %d, want 404", w.Code)
	}
}
