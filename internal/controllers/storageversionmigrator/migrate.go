package storageversionmigrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
)

// resolve is the served resource a migration names, in the group's
// preferred version that serves it, as a REST mapper finds it.
func (c *Controller) resolve(gr metav1.GroupResource) (*registry.Resource, bool) {
	for _, v := range c.cat.Versions(gr.Group) {
		if res, ok := c.cat.Lookup(schema.GroupVersionResource{Group: gr.Group, Version: v, Resource: gr.Resource}); ok {
			return res, true
		}
	}
	return nil, false
}

// migrate patches every object of the migration's resource whose
// resourceVersion is not newer than the migration's, then marks the
// migration Succeeded. An object changed or deleted meanwhile needs no
// patch; a transient error leaves the migration Running and retries; any
// other fails it.
func (c *Controller) migrate(ctx context.Context, key string, m *migration) error {
	res, ok := c.resolve(m.Spec.Resource)
	if !ok {
		if c.waitForResource(key, m) {
			return nil
		}
		return c.fail(ctx, m, errors.New("unable to obtain GVR from discovery"))
	}
	_, objs, err := layout.List(ctx, c.store, res, 0)
	if err != nil {
		return err
	}
	var candidates []metav1.Object
	for _, obj := range objs {
		o, err := apimeta.Accessor(obj)
		if err != nil {
			return c.fail(ctx, m, err)
		}
		newer, err := resourceversion.CompareResourceVersion(o.GetResourceVersion(), m.Status.ResourceVersion)
		if err != nil {
			return c.fail(ctx, m, err)
		}
		if newer <= 0 {
			candidates = append(candidates, o)
		}
	}
	left, total := len(candidates), len(objs)
	for _, o := range candidates {
		err := c.rewrite(ctx, res, o)
		switch {
		case err == nil, apierrors.IsConflict(err), apierrors.IsNotFound(err):
			left--
		case transient(err):
			c.setRunning(ctx, m, left, total, err)
			return err
		default:
			return c.failWithProgress(ctx, m, err, left, total)
		}
	}
	running := setCondition(m, storagemigrationv1.MigrationRunning, reasonRunning, runningMessage(left, total, nil))
	succeeded := setCondition(m, storagemigrationv1.MigrationSucceeded, reasonSucceeded, msgCompleted)
	if !running && !succeeded {
		return nil
	}
	return c.writeStatus(ctx, m)
}

// rewrite sends the no-op merge patch of one object: its kind and the
// resourceVersion read, so that it fails on a conflict rather than
// rewrite a newer version.
func (c *Controller) rewrite(ctx context.Context, res *registry.Resource, o metav1.Object) error {
	apiVersion, kind := res.GroupVersionKind().ToAPIVersionAndKind()
	patch, err := json.Marshal(map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"resourceVersion": o.GetResourceVersion()}})
	if err != nil {
		return err
	}
	_, err = c.client.Resource(res.GroupVersionResource).Namespace(o.GetNamespace()).
		Patch(ctx, o.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: Name})
	return err
}

// transient reports whether a patch's error is worth retrying.
func transient(err error) bool {
	return utilnet.IsConnectionReset(err) || utilnet.IsHTTP2ConnectionLost(err) || utilnet.IsProbableEOF(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsInternalError(err) || apierrors.IsTimeout(err)
}

// setCondition sets a True condition of type t, reporting whether the
// status changed.
func setCondition(m *migration, t storagemigrationv1.MigrationConditionType, reason, message string) bool {
	return apimeta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: string(t), Status: metav1.ConditionTrue,
		LastTransitionTime: metav1.Now(), Reason: reason, Message: message})
}

// setRunning records the progress of an interrupted migration (best
// effort: the retry writes it again).
func (c *Controller) setRunning(ctx context.Context, m *migration, left, total int, cause error) {
	if setCondition(m, storagemigrationv1.MigrationRunning, reasonRunning, runningMessage(left, total, cause)) {
		_ = c.writeStatus(ctx, m)
	}
}

// fail marks the migration Failed by an error.
func (c *Controller) fail(ctx context.Context, m *migration, cause error) error {
	if !setCondition(m, storagemigrationv1.MigrationFailed, reasonFailed, "migration encountered unhandled error: "+cause.Error()) {
		return nil
	}
	return c.writeStatus(ctx, m)
}

// failWithProgress marks the migration Failed by a patch's error, with how
// far it got.
func (c *Controller) failWithProgress(ctx context.Context, m *migration, cause error, left, total int) error {
	running := setCondition(m, storagemigrationv1.MigrationRunning, reasonRunning, runningMessage(left, total, nil))
	failed := setCondition(m, storagemigrationv1.MigrationFailed, reasonFailed,
		fmt.Sprintf("%d/%d not yet migrated. migration encountered unhandled error: %s", left, total, cause))
	if !running && !failed {
		return nil
	}
	return c.writeStatus(ctx, m)
}
