package openapi

import (
	"encoding/base64"
	"encoding/json"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// shareV2Parameters moves the parameters of sw's paths into its
// parameters section and refers to them, as kube-apiserver's v2 document
// does (kube-openapi's builder): every parameter but those naming the
// object ("name", whose description names the kind), fieldValidation and
// dryRun (kubectl once looked for them inline), and bodies of a kind's own
// schema. A shared parameter is named "<name>-<hash>", the hash the first
// six bytes of the 64-bit FNV-1 of its JSON, in URL-safe base64; the names
// are handed out in the order of that JSON, and a clash (not seen) takes
// "<name>-<n>".
func shareV2Parameters(sw *spec.Swagger) error {
	shared := map[string]spec.Parameter{}
	each := func(visit func(p *spec.Parameter) error) error {
		for path, item := range sw.Paths.Paths {
			for _, op := range v2Operations(&item) {
				for i := range op.Parameters {
					if err := visit(&op.Parameters[i]); err != nil {
						return err
					}
				}
			}
			for i := range item.Parameters {
				if err := visit(&item.Parameters[i]); err != nil {
					return err
				}
			}
			sw.Paths.Paths[path] = item
		}
		return nil
	}
	if err := each(func(p *spec.Parameter) error {
		key, ok, err := shareKey(p)
		if ok {
			shared[key] = *p
		}
		return err
	}); err != nil {
		return err
	}
	names := map[string]string{}
	sw.Parameters = map[string]spec.Parameter{}
	for _, key := range slices.Sorted(maps.Keys(shared)) {
		p := shared[key]
		name := p.Name + "-" + shortHash(key)
		for n := 1; hasParameter(sw, name); n++ {
			name = p.Name + "-" + strconv.Itoa(n)
		}
		names[key], sw.Parameters[name] = name, p
	}
	return each(func(p *spec.Parameter) error {
		key, ok, err := shareKey(p)
		if ok {
			*p = spec.Parameter{Refable: spec.Refable{Ref: spec.MustCreateRef("#/parameters/" + names[key])}}
		}
		return err
	})
}

// shareKey is a shared parameter's JSON; ok is false for one kept inline.
func shareKey(p *spec.Parameter) (string, bool, error) {
	switch {
	case p.Ref.String() != "",
		(p.In == "query" || p.In == "path") && p.Name == "name",
		p.In == "query" && (p.Name == "fieldValidation" || p.Name == "dryRun"),
		p.In == "body" && p.Name == "body" && p.Schema != nil && !strings.HasPrefix(p.Schema.Ref.String(), v2RefPrefix+"io.k8s.apimachinery"):
		return "", false, nil
	}
	b, err := json.Marshal(p)
	return string(b), err == nil, err
}

func shortHash(s string) string {
	h := fnv.New64()
	h.Write([]byte(s))
	return base64.URLEncoding.EncodeToString(h.Sum(nil)[:6])
}

func hasParameter(sw *spec.Swagger, name string) bool {
	_, ok := sw.Parameters[name]
	return ok
}

// v2Operations are a path's operations, those it has.
func v2Operations(item *spec.PathItem) []*spec.Operation {
	var out []*spec.Operation
	for _, op := range []*spec.Operation{item.Get, item.Put, item.Post, item.Delete, item.Options, item.Head, item.Patch} {
		if op != nil {
			out = append(out, op)
		}
	}
	return out
}
