package registry

// applyBuiltinStrategy attaches the per-kind behaviour of a built-in resource.
func applyBuiltinStrategy(r *Resource) {
	if s, ok := builtinStrategies[r.GroupVersionKind().GroupKind().String()]; ok {
		r.Strategy = s
	}
}

// builtinStrategies maps GroupKind strings ("Pod", "Deployment.apps") to
// their strategy. Kinds not listed get metadata validation only.
var builtinStrategies = map[string]Strategy{}
