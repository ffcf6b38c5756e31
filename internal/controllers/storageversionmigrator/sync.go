package storageversionmigrator

import (
	"context"
	"fmt"
	"strings"
	"time"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

type migration = storagemigrationv1.StorageVersionMigration

// The reasons and messages upstream's controller writes.
const (
	reasonRunning   = "MigrationRunning"
	reasonSucceeded = "StorageVersionMigrationSucceeded"
	reasonFailed    = "StorageVersionMigrationFailed"
	reasonCompleted = "MigrationCompleted"
	msgCompleted    = "Migration completed"
)

// unknownResourceGrace is how long a migration of a resource the server
// does not serve waits for it before failing.
const unknownResourceGrace = time.Minute

// sync takes the migrations of one resource a step further, as upstream's
// three loops do between them: a Running migration that ended is marked
// not Running; with none Running, the oldest pending one starts; a Running
// one without a resourceVersion gets the resource's current one; a Running
// one with it migrates every object not written since. Each step is one
// status write, whose event brings the resource back for the next.
func (c *Controller) sync(ctx context.Context, key string) error {
	all, err := c.migrationsOf(ctx, key)
	if err != nil {
		return err
	}
	var running, next *migration
	for _, m := range all {
		switch {
		case isRunning(m) && isTerminal(m):
			return c.complete(ctx, m)
		case isRunning(m):
			running = m
		case !isTerminal(m) && (next == nil || older(m, next)):
			next = m
		}
	}
	switch {
	case running == nil && next != nil:
		return c.start(ctx, next)
	case running == nil:
		return nil
	case running.Status.ResourceVersion == "":
		return c.checkpoint(ctx, key, running)
	}
	return c.migrate(ctx, key, running)
}

// migrationsOf are the stored migrations of the resource key names.
func (c *Controller) migrationsOf(ctx context.Context, key string) ([]*migration, error) {
	page, err := c.store.List(ctx, layout.ResourcePrefix(c.migrations), storage.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []*migration
	for _, kv := range page.Items {
		m, err := c.decode(kv)
		if err != nil {
			return nil, err
		}
		if m.Spec.Resource.String() == key {
			out = append(out, m)
		}
	}
	return out, nil
}

func isRunning(m *migration) bool {
	return apimeta.IsStatusConditionTrue(m.Status.Conditions, string(storagemigrationv1.MigrationRunning))
}

func isTerminal(m *migration) bool {
	return apimeta.IsStatusConditionTrue(m.Status.Conditions, string(storagemigrationv1.MigrationSucceeded)) ||
		apimeta.IsStatusConditionTrue(m.Status.Conditions, string(storagemigrationv1.MigrationFailed))
}

// older orders migrations by creation, then name.
func older(a, b *migration) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// start marks a migration Running (and its custom resource's definition
// StorageMigrating).
func (c *Controller) start(ctx context.Context, m *migration) error {
	if err := c.markDefinitionMigrating(ctx, m); err != nil {
		return err
	}
	if !addCondition(m, storagemigrationv1.MigrationRunning, reasonRunning, runningMessage(0, 0, nil)) {
		return nil
	}
	return c.writeStatus(ctx, m)
}

// complete marks an ended migration no longer Running, after finishing its
// definition's migration.
func (c *Controller) complete(ctx context.Context, m *migration) error {
	if err := c.finishDefinition(ctx, m); err != nil {
		return err
	}
	apimeta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: string(storagemigrationv1.MigrationRunning),
		Status: metav1.ConditionFalse, Reason: reasonCompleted, Message: msgCompleted, ObservedGeneration: m.Generation})
	return c.writeStatus(ctx, m)
}

// checkpoint records the resource's current resourceVersion in a Running
// migration: objects written after it need no migration. A resource the
// server does not serve (after a minute's grace), or that cannot be
// listed, patched and updated, fails the migration.
func (c *Controller) checkpoint(ctx context.Context, key string, m *migration) error {
	res, ok := c.resolve(m.Spec.Resource)
	if !ok {
		if c.waitForResource(key, m) {
			return nil
		}
		return c.failOnce(ctx, m, "resource does not exist in discovery")
	}
	gvr := res.GroupVersionResource
	if !migratable(res.Verbs) {
		return c.failOnce(ctx, m, fmt.Sprintf("resource %q does not support discovery operations: %v", gvr.String(), requiredVerbs))
	}
	list := c.client.Resource(gvr)
	var page *unstructured.UnstructuredList
	var err error
	if res.Namespaced {
		// A namespace that cannot exist: only the list's resourceVersion
		// is wanted.
		page, err = list.Namespace(fakeNamespace).List(ctx, metav1.ListOptions{Limit: 1})
	} else {
		page, err = list.List(ctx, metav1.ListOptions{Limit: 1})
	}
	if err != nil {
		return fmt.Errorf("error getting latest resourceVersion for %s: %w", gvr.String(), err)
	}
	rv := page.GetResourceVersion()
	if _, err := resourceversion.CompareResourceVersion(rv, rv); err != nil {
		return c.failOnce(ctx, m, fmt.Sprintf("latest resourceVersion for %s is not valid: %v", gvr.String(), err))
	}
	m.Status.ResourceVersion = rv
	return c.writeStatus(ctx, m)
}

// fakeNamespace is upstream's namespace for reading a namespaced
// resource's current resourceVersion.
const fakeNamespace = "@fake:svm_ns!"

// requiredVerbs are what a resource must serve to be migrated.
var requiredVerbs = []string{"update", "patch", "list"}

func migratable(verbs []string) bool {
	have := " " + strings.Join(verbs, " ") + " "
	for _, v := range requiredVerbs {
		if !strings.Contains(have, " "+v+" ") {
			return false
		}
	}
	return true
}

// waitForResource requeues the migration's resource until a minute after
// the migration's creation, reporting whether it did.
func (c *Controller) waitForResource(key string, m *migration) bool {
	wait := m.CreationTimestamp.Add(unknownResourceGrace).Sub(c.now())
	if wait <= 0 {
		return false
	}
	c.queue.AddAfter(key, wait)
	return true
}

// addCondition adds a True condition of type t unless the migration has
// one True or False already (upstream's setStatusConditions), reporting
// whether it did.
func addCondition(m *migration, t storagemigrationv1.MigrationConditionType, reason, message string) bool {
	if c := apimeta.FindStatusCondition(m.Status.Conditions, string(t)); c != nil && c.Status != metav1.ConditionUnknown {
		return false
	}
	m.Status.Conditions = append(m.Status.Conditions, metav1.Condition{Type: string(t), Status: metav1.ConditionTrue,
		LastTransitionTime: metav1.Now(), Reason: reason, Message: message})
	return true
}

// failOnce marks the migration Failed with message, unless it has a
// Failed condition already.
func (c *Controller) failOnce(ctx context.Context, m *migration, message string) error {
	if !addCondition(m, storagemigrationv1.MigrationFailed, reasonFailed, message) {
		return nil
	}
	return c.writeStatus(ctx, m)
}

// writeStatus writes the migration's status through /status.
func (c *Controller) writeStatus(ctx context.Context, m *migration) error {
	content, err := toUnstructured(m)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetAPIVersion(migrationsGVR.GroupVersion().String())
	u.SetKind("StorageVersionMigration")
	_, err = c.client.Resource(migrationsGVR).UpdateStatus(ctx, u, metav1.UpdateOptions{})
	return err
}

// runningMessage says how far a migration is: objects left of total, or
// total verified, and a transient error if one interrupted it.
func runningMessage(left, total int, transient error) string {
	msg := "The migration is running"
	if total > 0 {
		if left > 0 {
			msg += fmt.Sprintf(", %d/%d objects not yet migrated", left, total)
		} else {
			msg += fmt.Sprintf(", %d objects verified migrated", total)
		}
	}
	if transient != nil {
		msg += "; transient error: " + transient.Error()
	}
	return msg
}
