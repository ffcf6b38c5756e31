package cel

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/util/version"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"
	"k8s.io/apiserver/pkg/cel/mutation"
)

// Cost limits, in cel-go cost units (the values of upstream's
// k8s.io/apiserver/pkg/apis/cel constants).
const (
	// PerCallLimit bounds the cost of one expression evaluation.
	PerCallLimit = 1_000_000
	// RuntimeBudget is the budget of one policy evaluation (VAP: per
	// policy, binding and param; MAP: per mutation).
	RuntimeBudget = 10_000_000
	// MatchConditionsBudget is the budget shared by all matchConditions of
	// one webhook or policy evaluation.
	MatchConditionsBudget = 2_500_000
	// checkFrequency is how many comprehension iterations run between two
	// checks of the context ("operation interrupted").
	checkFrequency = 100
)

// DefaultCompatibilityVersion is the CEL compatibility version of a 1.37
// server: its minimum compatibility version, the binary's minor minus one.
// It only shapes the NewExpressions environment.
var DefaultCompatibilityVersion = version.MajorMinor(1, 36)

// Variable names, as expressions spell them.
const (
	ObjectVar                    = "object"
	OldObjectVar                 = "oldObject"
	ParamsVar                    = "params"
	RequestVar                   = "request"
	NamespaceVar                 = "namespaceObject"
	AuthorizerVar                = "authorizer"
	RequestResourceAuthorizerVar = "authorizer.requestResource"
	VariablesVar                 = "variables"
)

// declarations selects which optional variables and types an environment
// declares; object, oldObject, request and namespaceObject are always there.
type declarations struct {
	params, authorizer, patchTypes bool
}

func field(name string, t *apiservercel.DeclType, required bool) *apiservercel.DeclField {
	return apiservercel.NewDeclField(name, t, required, nil, nil)
}

func fields(fs ...*apiservercel.DeclField) map[string]*apiservercel.DeclField {
	out := make(map[string]*apiservercel.DeclField, len(fs))
	for _, f := range fs {
		out[f.Name] = f
	}
	return out
}

// RequestType is kubernetes.AdmissionRequest, the type of the request
// variable: an admission/v1 AdmissionRequest without uid, object and
// oldObject. Each call returns a new DeclType.
func RequestType() *apiservercel.DeclType {
	str, list := apiservercel.StringType, apiservercel.NewListType(apiservercel.StringType, -1)
	gvk := apiservercel.NewObjectType("kubernetes.GroupVersionKind", fields(
		field("group", str, true), field("version", str, true), field("kind", str, true)))
	gvr := apiservercel.NewObjectType("kubernetes.GroupVersionResource", fields(
		field("group", str, true), field("version", str, true), field("resource", str, true)))
	user := apiservercel.NewObjectType("kubernetes.UserInfo", fields(
		field("username", str, false), field("uid", str, false), field("groups", list, false),
		field("extra", apiservercel.NewMapType(str, list, -1), false)))
	return apiservercel.NewObjectType("kubernetes.AdmissionRequest", fields(
		field("kind", gvk, true), field("resource", gvr, true), field("subResource", str, false),
		field("requestKind", gvk, true), field("requestResource", gvr, true), field("requestSubResource", str, false),
		field("name", str, true), field("namespace", str, false), field("operation", str, true),
		field("userInfo", user, true), field("dryRun", apiservercel.BoolType, false),
		field("options", apiservercel.DynType, false)))
}

// NamespaceType is kubernetes.Namespace, the type of namespaceObject: the
// fields of a Namespace that expressions may read (metadata.UID is declared
// as upstream declares it, though the value's key is uid). Each call
// returns a new DeclType.
func NamespaceType() *apiservercel.DeclType {
	str, ts := apiservercel.StringType, apiservercel.TimestampType
	strs := apiservercel.NewListType(str, -1)
	strMap := apiservercel.NewMapType(str, str, -1)
	spec := apiservercel.NewObjectType("kubernetes.NamespaceSpec", fields(field("finalizers", strs, true)))
	condition := apiservercel.NewObjectType("kubernetes.NamespaceCondition", fields(
		field("status", str, true), field("type", str, true), field("lastTransitionTime", ts, true),
		field("message", str, true), field("reason", str, true)))
	status := apiservercel.NewObjectType("kubernetes.NamespaceStatus", fields(
		field("conditions", apiservercel.NewListType(condition, -1), true), field("phase", str, true)))
	metadata := apiservercel.NewObjectType("kubernetes.NamespaceMetadata", fields(
		field("name", str, true), field("generateName", str, true), field("namespace", str, true),
		field("labels", strMap, true), field("annotations", strMap, true), field("UID", str, true),
		field("creationTimestamp", ts, true), field("deletionGracePeriodSeconds", apiservercel.IntType, true),
		field("deletionTimestamp", ts, true), field("generation", apiservercel.IntType, true),
		field("resourceVersion", str, true), field("finalizers", strs, true)))
	return apiservercel.NewObjectType("kubernetes.Namespace", fields(
		field("metadata", metadata, true), field("spec", spec, true), field("status", status, true)))
}

// buildEnv extends base with the admission variables of d, strict cost
// tracking for the Kubernetes libraries, and for MutatingAdmissionPolicy the
// patch types. object, oldObject and params are dyn unless t types them.
func buildEnv(base *environment.EnvSet, d declarations, t Types) (*environment.EnvSet, error) {
	req, ns := RequestType(), NamespaceType()
	decls := []*apiservercel.DeclType{ns, req}
	object, params := cel.DynType, cel.DynType
	if t.Object != nil {
		object, decls = t.Object.CelType(), append(decls, t.Object)
	}
	if t.Params != nil {
		params, decls = t.Params.CelType(), append(decls, t.Params)
	}
	opts := []cel.EnvOption{
		cel.Variable(ObjectVar, object),
		cel.Variable(OldObjectVar, object),
		cel.Variable(NamespaceVar, ns.CelType()),
		cel.Variable(RequestVar, req.CelType()),
	}
	if d.params {
		opts = append(opts, cel.Variable(ParamsVar, params))
	}
	if d.authorizer {
		opts = append(opts,
			cel.Variable(AuthorizerVar, library.AuthorizerType),
			cel.Variable(RequestResourceAuthorizerVar, library.ResourceCheckType))
	}
	env, err := base.Extend(environment.VersionedOptions{
		// Always present, whatever the compatibility version.
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions:        opts,
		DeclTypes:         decls,
	}, environment.StrictCostOpt)
	if err != nil {
		return nil, fmt.Errorf("environment misconfigured: %w", err)
	}
	if d.patchTypes {
		env, err = env.Extend(environment.VersionedOptions{
			IntroducedVersion: version.MajorMinor(1, 0),
			EnvOptions: []cel.EnvOption{
				common.ResolverEnvOption(&mutation.DynamicTypeResolver{}),
				environment.UnversionedLib(library.JSONPatch),
			},
		})
		if err != nil {
			return nil, fmt.Errorf("environment misconfigured: %w", err)
		}
	}
	return env, nil
}
