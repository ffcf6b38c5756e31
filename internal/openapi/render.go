package openapi

import (
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

const v2RefPrefix = "#/definitions/"

// byPath groups routes by path, keeping their order.
func byPath(routes []route) (paths []string, groups map[string][]route) {
	groups = map[string][]route{}
	for _, r := range routes {
		if _, ok := groups[r.path]; !ok {
			paths = append(paths, r.path)
		}
		groups[r.path] = append(groups[r.path], r)
	}
	return paths, groups
}

// hoist returns the parameters every operation of a path shares (upstream
// publishes them on the path) and each operation's others.
func hoist(rs []route) (common []param, rest [][]param) {
	type where struct{ name, in string } // a proxy has {path} and ?path=
	count := map[where]int{}
	for _, r := range rs {
		for _, p := range r.params {
			count[where{p.name, p.in}]++
		}
	}
	for _, p := range rs[0].params {
		if count[where{p.name, p.in}] == len(rs) {
			common = append(common, p)
		}
	}
	for _, r := range rs {
		var own []param
		for _, p := range r.params {
			if count[where{p.name, p.in}] != len(rs) {
				own = append(own, p)
			}
		}
		rest = append(rest, own)
	}
	return common, rest
}

func extensions(r route) spec.Extensions {
	ext := spec.Extensions{}
	if r.action != "" {
		ext["x-kubernetes-action"] = r.action
	}
	if r.gvk != nil {
		ext[gvkExtension] = map[string]any{"group": r.gvk.Group, "version": r.gvk.Version, "kind": r.gvk.Kind}
	}
	return ext
}

func tags(r route) []string {
	if r.tag == "" {
		return nil
	}
	return []string{r.tag}
}

// v3Paths renders routes as OpenAPI v3 paths.
func v3Paths(routes []route) *spec3.Paths {
	order, groups := byPath(routes)
	out := &spec3.Paths{Paths: map[string]*spec3.Path{}}
	for _, path := range order {
		rs := groups[path]
		common, rest := hoist(rs)
		p := &spec3.Path{PathProps: spec3.PathProps{Parameters: v3Params(common)}}
		for i, r := range rs {
			op := &spec3.Operation{OperationProps: spec3.OperationProps{
				Description: r.desc, OperationId: r.opID, Tags: tags(r), Parameters: v3Params(rest[i]),
				Responses: v3Responses(r),
			}}
			op.Extensions = extensions(r)
			if r.request != "" {
				op.RequestBody = &spec3.RequestBody{RequestBodyProps: spec3.RequestBodyProps{
					Content: v3Content(r.consumes, refTo(v3RefPrefix, r.request)), Required: bodyRequired(r),
				}}
			}
			switch r.method {
			case "get":
				p.Get = op
			case "put":
				p.Put = op
			case "post":
				p.Post = op
			case "delete":
				p.Delete = op
			case "patch":
				p.Patch = op
			case "head":
				p.Head = op
			case "options":
				p.Options = op
			}
		}
		out.Paths[path] = p
	}
	return out
}

// bodyRequired: a create, replace or patch needs its body; a delete's
// DeleteOptions may be left out.
func bodyRequired(r route) bool { return r.method != "delete" }

func refTo(prefix, model string) *spec.Schema {
	if model == "" {
		return &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"string"}}}
	}
	return spec.RefSchema(prefix + model)
}

func v3Content(types []string, s *spec.Schema) map[string]*spec3.MediaType {
	out := map[string]*spec3.MediaType{}
	for _, t := range types {
		out[t] = &spec3.MediaType{MediaTypeProps: spec3.MediaTypeProps{Schema: s}}
	}
	return out
}

func v3Responses(r route) *spec3.Responses {
	codes := map[int]*spec3.Response{401: {ResponseProps: spec3.ResponseProps{Description: "Unauthorized"}}}
	for _, resp := range r.responses {
		codes[resp.code] = &spec3.Response{ResponseProps: spec3.ResponseProps{
			Description: resp.desc, Content: v3Content(r.produces, refTo(v3RefPrefix, resp.model)),
		}}
	}
	return &spec3.Responses{ResponsesProps: spec3.ResponsesProps{StatusCodeResponses: codes}}
}

func v3Params(ps []param) []*spec3.Parameter {
	var out []*spec3.Parameter
	for _, p := range ps {
		out = append(out, &spec3.Parameter{ParameterProps: spec3.ParameterProps{
			Name: p.name, In: p.in, Description: p.desc, Required: p.in == "path",
			Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{p.typ}, UniqueItems: true}},
		}})
	}
	return out
}

// v2Paths renders routes as OpenAPI v2 paths.
func v2Paths(routes []route) *spec.Paths {
	order, groups := byPath(routes)
	out := &spec.Paths{Paths: map[string]spec.PathItem{}}
	for _, path := range order {
		rs := groups[path]
		common, rest := hoist(rs)
		item := spec.PathItem{PathItemProps: spec.PathItemProps{Parameters: v2Params(common)}}
		for i, r := range rs {
			op := &spec.Operation{OperationProps: spec.OperationProps{
				Description: r.desc, Consumes: r.consumes, Produces: r.produces, Schemes: []string{"https"},
				Tags: tags(r), ID: r.opID, Parameters: v2Params(rest[i]), Responses: v2Responses(r),
			}}
			if op.Consumes == nil {
				op.Consumes = anyMedia
			}
			op.Extensions = extensions(r)
			if r.request != "" {
				op.Parameters = append([]spec.Parameter{{ParamProps: spec.ParamProps{
					Name: "body", In: "body", Required: bodyRequired(r), Schema: refTo(v2RefPrefix, r.request),
				}}}, op.Parameters...)
			}
			switch r.method {
			case "get":
				item.Get = op
			case "put":
				item.Put = op
			case "post":
				item.Post = op
			case "delete":
				item.Delete = op
			case "patch":
				item.Patch = op
			case "head":
				item.Head = op
			case "options":
				item.Options = op
			}
		}
		out.Paths[path] = item
	}
	return out
}

func v2Params(ps []param) []spec.Parameter {
	var out []spec.Parameter
	for _, p := range ps {
		sp := spec.Parameter{ParamProps: spec.ParamProps{Name: p.name, In: p.in, Description: p.desc, Required: p.in == "path"}}
		sp.Type = p.typ
		sp.UniqueItems = true
		out = append(out, sp)
	}
	return out
}

func v2Responses(r route) *spec.Responses {
	codes := map[int]spec.Response{401: {ResponseProps: spec.ResponseProps{Description: "Unauthorized"}}}
	for _, resp := range r.responses {
		codes[resp.code] = spec.Response{ResponseProps: spec.ResponseProps{Description: resp.desc, Schema: refTo(v2RefPrefix, resp.model)}}
	}
	return &spec.Responses{ResponsesProps: spec.ResponsesProps{StatusCodeResponses: codes}}
}
