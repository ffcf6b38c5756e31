package storageversionmigrator

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
)

// runnerManager is the field manager of the definition's conditions, as
// upstream's migration-runner-controller applies them.
const runnerManager = "migration-runner-controller"

var definitionsGVR = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// definition is the CustomResourceDefinition of a migration's resource,
// nil when the resource is not a custom one.
func (c *Controller) definition(ctx context.Context, gr metav1.GroupResource) (*apiextensionsv1.CustomResourceDefinition, error) {
	u, err := c.client.Resource(definitionsGVR).Get(ctx, gr.Resource+"."+gr.Group, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
		return nil, err
	}
	return crd, nil
}

// markDefinitionMigrating sets a custom resource's definition
// StorageMigrating as the migration starts.
func (c *Controller) markDefinitionMigrating(ctx context.Context, m *migration) error {
	return c.applyDefinitionStatus(ctx, m.Spec.Resource, func(crd *apiextensionsv1.CustomResourceDefinition) map[string]any {
		return definitionStatus(crd, apiextensionsv1.ConditionTrue, "MigrationRunning", fmt.Sprintf("Migration %s is running", m.Name), nil)
	})
}

// finishDefinition ends a custom resource's StorageMigrating condition and,
// after a success seen at the definition's current generation, keeps only
// the storage version in status.storedVersions.
func (c *Controller) finishDefinition(ctx context.Context, m *migration) error {
	success := apimeta.IsStatusConditionTrue(m.Status.Conditions, string(storagemigrationv1.MigrationSucceeded))
	return c.applyDefinitionStatus(ctx, m.Spec.Resource, func(crd *apiextensionsv1.CustomResourceDefinition) map[string]any {
		current := false
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.StorageMigrating {
				current = cond.ObservedGeneration == crd.Generation
				break
			}
		}
		if !success {
			return definitionStatus(crd, apiextensionsv1.ConditionFalse, "MigrationFailed", "The migration has failed", nil)
		}
		msg := "The migration has succeeded"
		if !current {
			return definitionStatus(crd, apiextensionsv1.ConditionFalse, "MigrationSucceeded",
				msg+" but the stored versions have not been updated due to a generation mismatch", nil)
		}
		var stored []any
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				stored = []any{v.Name}
				break
			}
		}
		return definitionStatus(crd, apiextensionsv1.ConditionFalse, "MigrationSucceeded", msg+" and the stored versions have been updated", stored)
	})
}

// applyDefinitionStatus applies the status status makes of the current
// definition of gr, if gr is a custom resource, retrying on conflicts.
func (c *Controller) applyDefinitionStatus(ctx context.Context, gr metav1.GroupResource, status func(*apiextensionsv1.CustomResourceDefinition) map[string]any) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd, err := c.definition(ctx, gr)
		if err != nil || crd == nil {
			return err
		}
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": apiextensionsv1.SchemeGroupVersion.String(), "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": crd.Name, "resourceVersion": crd.ResourceVersion},
			"status":   status(crd),
		}}
		_, err = c.client.Resource(definitionsGVR).ApplyStatus(ctx, crd.Name, obj, metav1.ApplyOptions{FieldManager: runnerManager, Force: true})
		return err
	})
}

// definitionStatus is the applied status: the StorageMigrating condition,
// and the stored versions when given.
func definitionStatus(crd *apiextensionsv1.CustomResourceDefinition, status apiextensionsv1.ConditionStatus, reason, message string, stored []any) map[string]any {
	out := map[string]any{"conditions": []any{map[string]any{
		"type": string(apiextensionsv1.StorageMigrating), "status": string(status), "lastTransitionTime": metav1.Now().UTC().Format("2006-01-02T15:04:05Z"),
		"reason": reason, "message": message, "observedGeneration": crd.Generation,
	}}}
	if stored != nil {
		out["storedVersions"] = stored
	}
	return out
}
