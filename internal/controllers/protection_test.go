package controllers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
)

const claims = "/api/v1/namespaces/default/persistentvolumeclaims"

func (c *cluster) runProtection() {
	ctx, cancel := context.WithCancel(context.Background())
	c.t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go NewPVCProtection(c.store, c.cat, c.client(PVCProtectionUser), log).Run(ctx)
	go NewPVProtection(c.store, c.cat, c.client(PVProtectionUser), log).Run(ctx)
}

// createDeletedClaim creates a claim holding the pvc-protection finalizer
// (as admission would add it) with extra metadata, and deletes it.
func (c *cluster) createDeletedClaim(name, metadata string) {
	c.t.Helper()
	c.must(http.StatusCreated, "POST", claims, `{"metadata":{"name":"`+name+`","finalizers":["kubernetes.io/pvc-protection"]`+metadata+`},`+
		`"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`)
	c.must(http.StatusOK, "DELETE", claims+"/"+name, "")
}

// settled deletes an unused claim and waits until it is gone: the
// controller has by then also handled what was queued before it.
func (c *cluster) settled(probe string) {
	c.t.Helper()
	c.createDeletedClaim(probe, "")
	c.eventually("the unused claim "+probe+" is gone", c.gone(claims+"/"+probe))
}

func (c *cluster) stays(path string) {
	c.t.Helper()
	m := c.must(http.StatusOK, "GET", path, "")
	if m.DeletionTimestamp == nil {
		c.t.Fatalf("GET %s has no deletionTimestamp, want it terminating", path)
	}
}

func podJSON(name, nodeName, volume string) string {
	return fmt.Sprintf(`{"metadata":{"name":%q},"spec":{"nodeName":%q,"containers":[{"name":"c","image":"i"}],"volumes":[%s]}}`, name, nodeName, volume)
}

// A deleted claim stays while a scheduled pod names it, even once the pod
// has finished (as upstream), and goes when the pod is deleted; an unused
// claim, or one only an unscheduled pod names, goes at once.
func TestPVCProtection(t *testing.T) {
	c := newCluster(t)
	c.runProtection()
	pods := "/api/v1/namespaces/default/pods"
	c.must(http.StatusCreated, "POST", pods, podJSON("user", "n1", `{"name":"v","persistentVolumeClaim":{"claimName":"data"}}`))
	c.must(http.StatusCreated, "POST", pods, podJSON("pending", "", `{"name":"v","persistentVolumeClaim":{"claimName":"wanted"}}`))

	c.createDeletedClaim("data", "")
	c.createDeletedClaim("wanted", "")
	c.settled("probe-1")
	c.stays(claims + "/data")
	c.eventually("a claim only an unscheduled pod names is gone", c.gone(claims+"/wanted"))

	c.must(http.StatusOK, "PATCH", pods+"/user/status", `{"status":{"phase":"Failed"}}`)
	c.settled("probe-2")
	c.stays(claims + "/data")

	c.must(http.StatusOK, "DELETE", pods+"/user", "")
	c.eventually("the claim of a deleted pod is gone", c.gone(claims+"/data"))
}

// The claim of a generic ephemeral volume stays while the pod that
// controls it exists; a claim of the same name the pod does not control
// goes.
func TestPVCProtectionEphemeral(t *testing.T) {
	c := newCluster(t)
	c.runProtection()
	pods := "/api/v1/namespaces/default/pods"
	volume := `{"name":"scratch","ephemeral":{"volumeClaimTemplate":{"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}}}`
	pod := c.must(http.StatusCreated, "POST", pods, podJSON("eph", "n1", volume))
	c.must(http.StatusCreated, "POST", pods, podJSON("other", "n1", volume))

	owner := fmt.Sprintf(`,"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"eph","uid":%q,"controller":true}]`, pod.UID)
	c.createDeletedClaim("eph-scratch", owner)
	c.createDeletedClaim("other-scratch", "")
	c.eventually("an ephemeral claim its pod does not control is gone", c.gone(claims+"/other-scratch"))
	c.settled("probe")
	c.stays(claims + "/eph-scratch")

	c.must(http.StatusOK, "DELETE", pods+"/eph", "")
	c.eventually("the ephemeral claim of a deleted pod is gone", c.gone(claims+"/eph-scratch"))
}

// A deleted volume stays while it is Bound and goes once it is not.
func TestPVProtection(t *testing.T) {
	c := newCluster(t)
	c.runProtection()
	volumes := "/api/v1/persistentvolumes"
	create := func(name string) {
		c.must(http.StatusCreated, "POST", volumes, `{"metadata":{"name":"`+name+`","finalizers":["kubernetes.io/pv-protection"]},`+
			`"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"hostPath":{"path":"/tmp"}}}`)
	}
	create("bound")
	c.must(http.StatusOK, "PATCH", volumes+"/bound/status", `{"status":{"phase":"Bound"}}`)
	create("free")
	c.must(http.StatusOK, "DELETE", volumes+"/bound", "")
	c.must(http.StatusOK, "DELETE", volumes+"/free", "")
	c.eventually("the unbound volume is gone", c.gone(volumes+"/free"))
	c.stays(volumes + "/bound")

	c.must(http.StatusOK, "PATCH", volumes+"/bound/status", `{"status":{"phase":"Released"}}`)
	c.eventually("the released volume is gone", c.gone(volumes+"/bound"))
}
