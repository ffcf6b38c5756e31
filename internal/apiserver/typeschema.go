package apiserver

import (
	"bytes"
	_ "embed"
	"encoding/gob"
	"fmt"

	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/admitd/admitd/internal/registry"
)

// builtinSchemaGob is the structured-merge-diff schema of the built-in
// kinds that client-go's applyconfigurations carry as YAML, gob-encoded:
// it decodes in a twentieth of the time the YAML parses (~8 ms against
// ~150 ms of CPU), time the first write of every process waited for,
// a fresh server's start included. TestBuiltinSchemaCurrent checks it
// against client-go's YAML and regenerates it with -update.
//
//go:embed builtin_schema.gob
var builtinSchemaGob []byte

func init() {
	// The types a field's default may have in the schema, as YAML
	// decodes them.
	gob.Register(map[any]any{})
	gob.Register([]any{})
}

// decodeBuiltinSchema decodes builtinSchemaGob into a parser.
func decodeBuiltinSchema(data []byte) (*typed.Parser, error) {
	p := &typed.Parser{}
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&p.Schema); err != nil {
		return nil, fmt.Errorf("the built-in kinds' schema: %w", err)
	}
	return p, nil
}

// newBuiltinTypeConverter is client-go's applyconfigurations type
// converter, from the embedded schema.
func newBuiltinTypeConverter() managedfields.TypeConverter {
	p, err := decodeBuiltinSchema(builtinSchemaGob)
	if err != nil {
		panic(err) // the embedded data is checked by a test
	}
	return managedfields.NewSchemeTypeConverter(registry.Scheme, p)
}
