package registry

import (
	"context"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	schemacel "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
)

// crSchema is one custom resource version's compiled structural schema:
// what upstream's apiextensions-apiserver builds per served version to
// prune, default and validate its objects.
type crSchema struct {
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
	cel        *schemacel.Validator // nil without x-kubernetes-validations
}

// compileSchema builds the structural schema of openAPIV3Schema; it fails
// for a schema that is not structural.
func compileSchema(v1 *apiextensionsv1.JSONSchemaProps) (*crSchema, error) {
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1, internal, nil); err != nil {
		return nil, fmt.Errorf("converting the schema: %w", err)
	}
	ss, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, fmt.Errorf("the schema is not structural: %w", err)
	}
	if errs := structuralschema.ValidateStructural(nil, ss); len(errs) > 0 {
		return nil, fmt.Errorf("the schema is not structural: %w", errs.ToAggregate())
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(internal)
	if err != nil {
		return nil, fmt.Errorf("compiling the schema: %w", err)
	}
	return &crSchema{structural: ss, validator: validator, cel: schemacel.NewValidator(ss, true, celconfig.PerCallLimit)}, nil
}

// strategy is the behaviour of a custom resource with this schema.
func (c *crSchema) strategy() Strategy {
	return Strategy{
		Coerce:           c.coerce,
		Default:          func(obj runtime.Object) { c.pruneAndDefault(unstructuredContent(obj)) },
		PrepareForCreate: func(obj runtime.Object) { c.prune(unstructuredContent(obj)) },
		PrepareForUpdate: func(obj, _ runtime.Object) { c.prune(unstructuredContent(obj)) },
		Validate:         func(obj runtime.Object) field.ErrorList { return c.validate(unstructuredContent(obj), nil) },
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			return c.validate(unstructuredContent(obj), unstructuredContent(old))
		},
	}
}

func unstructuredContent(obj runtime.Object) map[string]any {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.Object
	}
	return nil
}

// coerce is upstream's unstructuredSchemaCoercer on decoding: it prunes
// what the schema does not declare, drops nulls nothing defaults, and
// returns the paths of the unknown fields (metadata's included).
func (c *crSchema) coerce(obj map[string]any) ([]string, error) {
	u := &unstructured.Unstructured{Object: obj}
	apiVersion, kind := u.GetAPIVersion(), u.GetKind()
	meta, hasMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(obj, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		return nil, err
	}
	unknown = append(unknown, structuralpruning.PruneWithOptions(obj, c.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, c.structural)
	ferr, paths := schemaobjectmeta.CoerceWithOptions(nil, obj, c.structural, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
	if ferr != nil {
		return nil, ferr
	}
	unknown = append(unknown, paths...)
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	if hasMeta {
		if err := schemaobjectmeta.SetObjectMeta(obj, meta); err != nil {
			return nil, err
		}
	}
	return unknown, nil
}

func (c *crSchema) prune(obj map[string]any) {
	if obj != nil {
		structuralpruning.Prune(obj, c.structural, true)
	}
}

// pruneAndDefault applies the schema's defaults (after pruning, as
// decoding does upstream).
func (c *crSchema) pruneAndDefault(obj map[string]any) {
	if obj == nil {
		return
	}
	c.prune(obj)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, c.structural)
	structuraldefaulting.Default(obj, c.structural)
}

// validate is upstream's customResourceStrategy validation: the OpenAPI
// schema (ratcheting unchanged fields on update), embedded objects' metadata,
// list types, then the x-kubernetes-validations rules unless the object is
// already badly invalid. Metadata is validated generically by the caller.
func (c *crSchema) validate(obj, old map[string]any) field.ErrorList {
	if obj == nil {
		return nil
	}
	ctx := context.TODO()
	var errs field.ErrorList
	var celOpts []schemacel.Option
	if old == nil {
		errs = apiservervalidation.ValidateCustomResource(nil, obj, c.validator)
	} else {
		correlated := common.NewCorrelatedObject(obj, old, &model.Structural{Structural: c.structural})
		errs = apiservervalidation.ValidateCustomResourceUpdate(nil, obj, old, c.validator, apiservervalidation.WithRatcheting(correlated))
		celOpts = append(celOpts, schemacel.WithRatcheting(correlated))
	}
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, obj, c.structural, false)...)
	if old == nil || len(structurallisttype.ValidateListSetsAndMaps(nil, c.structural, old)) == 0 {
		errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, c.structural, obj)...)
	}
	if c.cel == nil {
		return errs
	}
	if blocking := blockingError(errs); blocking != nil {
		return append(errs, blocking)
	}
	var oldSelf any
	if old != nil {
		oldSelf = old
	}
	celErrs, _ := c.cel.Validate(ctx, nil, c.structural, obj, oldSelf, celconfig.RuntimeCELCostBudget, celOpts...)
	return append(errs, celErrs...)
}

// blockingError is upstream's hasBlockingErr: rules are not run on an object
// with errors of these types.
func blockingError(errs field.ErrorList) *field.Error {
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")
		}
	}
	return nil
}
