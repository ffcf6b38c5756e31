// Package builtinschema is the structured-merge-diff schema of the
// built-in kinds that client-go's applyconfigurations carry as YAML, kept
// gob-encoded: it decodes in a twentieth of the time the YAML parses
// (~6 ms against ~150 ms of CPU), time the first write of every process
// waited for (a fresh server's start included), and the first mutating
// policy. TestBuiltinSchemaCurrent checks it against client-go's YAML and
// regenerates it with -update-schema.
package builtinschema

import (
	"bytes"
	_ "embed"
	"encoding/gob"
	"fmt"
	"sync"

	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

//go:embed builtin_schema.gob
var builtinSchemaGob []byte

func init() {
	// The types a field's default may have in the schema, as YAML
	// decodes them.
	gob.Register(map[any]any{})
	gob.Register([]any{})
}

// Parser is the parser of the built-in kinds' schema, decoded on first
// use and shared (a parser is read-only).
var Parser = sync.OnceValue(func() *typed.Parser {
	p, err := decode(builtinSchemaGob)
	if err != nil {
		panic(err) // the embedded data is checked by a test
	}
	return p
})

// decode decodes a gob-encoded schema into a parser.
func decode(data []byte) (*typed.Parser, error) {
	p := &typed.Parser{}
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&p.Schema); err != nil {
		return nil, fmt.Errorf("the built-in kinds' schema: %w", err)
	}
	return p, nil
}
