// Package builtinschema is the structured-merge-diff schema of the
// built-in kinds that client-go's applyconfigurations carry as YAML,
// generated as a Go literal (schema_gen.go) the compiler lays out as data:
// parsing the YAML took ~150 ms of CPU and decoding it from gob ~5 ms,
// time the first write of every process waited for (every start of the
// server among them). TestBuiltinSchemaCurrent checks it against
// client-go's YAML and regenerates it with -update-schema.
package builtinschema

import (
	"sync"

	"sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// Parser is the parser of the built-in kinds' schema, shared (a parser is
// read-only; the schema indexes its types on first use).
var Parser = sync.OnceValue(func() *typed.Parser {
	return &typed.Parser{Schema: schema.Schema{Types: builtinTypes}}
})
