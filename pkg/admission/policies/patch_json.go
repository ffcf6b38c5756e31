package policies

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"google.golang.org/protobuf/types/known/structpb"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apiserver/pkg/cel/mutation"
	"k8s.io/apiserver/pkg/cel/mutation/dynamic"

	"github.com/admitd/admitd/pkg/admission"
	admcel "github.com/admitd/admitd/pkg/admission/cel"
)

// jsonPatcher applies the RFC 6902 patch a JSONPatch expression builds,
// with the lenient semantics of evanphx/json-patch v4, and decodes the
// result strictly.
type jsonPatcher struct {
	comp   *admcel.Composition
	prog   *admcel.Program
	schema admission.Schema
}

// strictJSON encodes objects as they are and decodes strictly into the
// object it is given (unknown fields and wrong types are errors).
var strictJSON = kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, nil, unregisteredTyper{},
	kjson.SerializerOptions{Strict: true})

// unregisteredTyper makes the serializer decode into the given object
// whatever its Go type.
type unregisteredTyper struct{}

func (unregisteredTyper) ObjectKinds(obj runtime.Object) ([]schema.GroupVersionKind, bool, error) {
	return nil, false, runtime.NewNotRegisteredErrForType("admitd", reflect.TypeOf(obj))
}

func (unregisteredTyper) Recognizes(schema.GroupVersionKind) bool { return false }

func (p *jsonPatcher) patch(ctx context.Context, r patchRequest) (runtime.Object, error) {
	v, err := evalMutation(ctx, p.comp, p.prog, r.in)
	if err != nil {
		return nil, err
	}
	ops, err := jsonPatchOf(v)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := strictJSON.Encode(r.current, &buf); err != nil {
		return nil, fmt.Errorf("failed to create JSON patch: %w", err)
	}
	patched, err := ops.Apply(buf.Bytes())
	if err != nil {
		if errors.Is(err, jsonpatch.ErrTestFailed) {
			return r.current, nil // a failed test op makes the patch a no-op
		}
		return nil, fmt.Errorf("JSON Patch: %w", err)
	}
	var into runtime.Object = &unstructured.Unstructured{}
	if _, ok := r.current.(*unstructured.Unstructured); !ok {
		if into, err = p.schema.New(r.current.GetObjectKind().GroupVersionKind()); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
	}
	out, _, err := strictJSON.Decode(patched, nil, into)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return out, nil
}

// jsonPatchOf builds the patch document from a list(JSONPatch) value: op
// and path always, from when set, value when set (through a protobuf Value,
// so numbers travel as doubles).
func jsonPatchOf(v ref.Val) (jsonpatch.Patch, error) {
	list, ok := v.(traits.Lister)
	if !ok {
		return nil, fmt.Errorf("type mismatch: JSONPatchType.expression should evaluate to array")
	}
	var out jsonpatch.Patch
	for it := list.Iterator(); it.HasNext() == types.True; {
		native, err := it.Next().ConvertToNative(reflect.TypeOf(&mutation.JSONPatchVal{}))
		if err != nil {
			return nil, fmt.Errorf("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch: %w", err)
		}
		op, ok := native.(*mutation.JSONPatchVal)
		if !ok {
			return nil, fmt.Errorf("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch, got element of %T", native)
		}
		o := jsonpatch.Operation{"op": rawString(op.Op), "path": rawString(op.Path)}
		if op.From != "" {
			o["from"] = rawString(op.From)
		}
		if op.Val != nil {
			raw, err := jsonValue(op)
			if err != nil {
				return nil, err
			}
			o["value"] = &raw
		}
		out = append(out, o)
	}
	return out, nil
}

func rawString(s string) *json.RawMessage {
	raw := json.RawMessage(strconv.Quote(s))
	return &raw
}

func jsonValue(op *mutation.JSONPatchVal) (json.RawMessage, error) {
	if obj, ok := op.Val.(*dynamic.ObjectVal); ok {
		if err := obj.CheckTypeNamesMatchFieldPathNames(); err != nil {
			return nil, fmt.Errorf("type mismatch: %w", err)
		}
	}
	pb, err := op.Val.ConvertToNative(reflect.TypeOf(&structpb.Value{}))
	if err != nil {
		return nil, fmt.Errorf("JSONPath valueExpression evaluated to a type that could not marshal to JSON: %w", err)
	}
	b, err := json.Marshal(pb)
	if err != nil {
		return nil, fmt.Errorf("JSONPath valueExpression evaluated to a type that could not marshal to JSON: %w", err)
	}
	return b, nil
}
