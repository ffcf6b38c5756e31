package policies

import (
	"context"
	"errors"
	"fmt"
	"sort"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Configuration errors of params, with upstream's texts.
var (
	errNamespacedParamClusterRequest = errors.New("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
	errClusterParamNamespace         = errors.New("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
	errNameAndSelector               = errors.New("paramRef.name and paramRef.selector are mutually exclusive")
	errNoNameOrSelector              = errors.New("one of name or selector must be provided")
	errNoParamsDeny                  = errors.New("no params found for policy binding with `Deny` parameterNotFoundAction")
)

// paramKindError is the hook configuration error of a paramKind no served
// resource has.
func paramKindError(h *hook) error {
	return fmt.Errorf("failed to find resource referenced by paramKind: '%v'", h.paramGVK)
}

// noParams stands for "evaluate once, without params" (paramKind unset) or
// "with params = null" (paramRef unset).
var noParams = []runtime.Object{nil}

// collectParams returns the params a binding selects for a request in
// namespace: one evaluation per param. An empty result skips the binding.
// Errors are binding configuration errors.
func collectParams(ctx context.Context, src ParamSource, h *hook, b *binding, namespace string) ([]runtime.Object, error) {
	ref := b.paramRef
	if h.paramKind == nil || ref == nil {
		return noParams, nil
	}
	gvr, namespaced, ok := src.ResolveParamKind(h.paramGVK)
	if !ok {
		return nil, fmt.Errorf("paramKind kind `%v` not known", h.paramKind.String())
	}
	ns := ""
	if namespaced {
		ns = namespace
		if ref.Namespace != "" {
			ns = ref.Namespace
		} else if ns == "" {
			return nil, errNamespacedParamClusterRequest
		}
	} else if ref.Namespace != "" {
		return nil, errClusterParamNamespace
	}
	var params []runtime.Object
	switch {
	case ref.Name != "":
		if ref.Selector != nil {
			return nil, errNameAndSelector
		}
		p, err := src.GetParam(ctx, gvr, ns, ref.Name)
		switch {
		case err == nil:
			params = []runtime.Object{p}
		case apierrors.IsNotFound(err):
		default:
			return nil, err
		}
	case ref.Selector != nil:
		sel, err := metav1.LabelSelectorAsSelector(ref.Selector)
		if err != nil {
			return nil, err
		}
		if params, err = src.ListParams(ctx, gvr, ns, sel); err != nil {
			return nil, err
		}
		sortParams(params)
	default:
		return nil, errNoNameOrSelector
	}
	if len(params) == 0 && ref.ParameterNotFoundAction != nil && *ref.ParameterNotFoundAction == admissionregistrationv1.DenyAction {
		return nil, errNoParamsDeny
	}
	return params, nil
}

// sortParams orders params by namespace and name (upstream uses the
// informer's order, which is unspecified).
func sortParams(params []runtime.Object) {
	key := func(o runtime.Object) string {
		m, err := meta.Accessor(o)
		if err != nil {
			return ""
		}
		return m.GetNamespace() + "/" + m.GetName()
	}
	sort.SliceStable(params, func(i, j int) bool { return key(params[i]) < key(params[j]) })
}

// paramKey identifies a param for reinvocation: namespace/name, empty
// without a param.
func paramKey(p runtime.Object) string {
	if p == nil {
		return ""
	}
	m, err := meta.Accessor(p)
	if err != nil {
		return ""
	}
	return m.GetNamespace() + "/" + m.GetName()
}
