package apiserver

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Patches without a resourceVersion that race are applied one after the
// other, as upstream's GuaranteedUpdate does; a body whose resourceVersion
// is stale is still a conflict.
func TestConcurrentPatchesAreRetried(t *testing.T) {
	ts := newTestServer(t)
	created := ts.must(201, "POST", cmPath, "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"}}`)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 20 {
				patch := fmt.Sprintf(`{"data":{"g%d-%d":"x"}}`, g, i)
				if w := ts.do("PATCH", cmPath+"/cm", mediaMergePatch, patch); w.Code != 200 {
					t.Errorf("PATCH %s = %d %s, want 200", patch, w.Code, w.Body.String())
				}
			}
		})
	}
	wg.Wait()
	w := ts.do("GET", cmPath+"/cm", "", "")
	if n := strings.Count(w.Body.String(), `":"x"`); n != 80 {
		t.Errorf("ConfigMap has %d of the 80 keys patched in", n)
	}
	stale := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","resourceVersion":%q}}`, created.ResourceVersion)
	if w := ts.do("PUT", cmPath+"/cm", "application/json", stale); w.Code != 409 || !strings.Contains(w.Body.String(), optimisticLockMsg) {
		t.Errorf("PUT with a stale resourceVersion = %d %s, want 409 %q", w.Code, w.Body.String(), optimisticLockMsg)
	}
}
