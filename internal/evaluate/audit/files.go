package audit

import (
	"context"

	"github.com/admitd/admitd/internal/evaluate"
)

// Files are objects read from files: List documents, multi-document
// YAML, JSON, directories (as `admitd eval -f` reads them).
type Files struct {
	Objects []evaluate.Object
}

// LoadFiles reads the objects of the files and directories.
func LoadFiles(paths ...string) (*Files, error) {
	objs, err := evaluate.LoadObjects(paths...)
	if err != nil {
		return nil, err
	}
	return &Files{Objects: objs}, nil
}

// Seed are the namespaces and CRDs of the files, and a namespace without
// labels for every other namespace an object is in.
func (f *Files) Seed(context.Context) ([]evaluate.Object, error) {
	var out []evaluate.Object
	have := map[string]bool{}
	for _, o := range f.Objects {
		if kept(o.GroupVersionKind()) {
			out = append(out, o)
			if o.GetKind() == "Namespace" {
				have[o.GetName()] = true
			}
		}
	}
	for _, o := range f.Objects {
		if ns := o.GetNamespace(); ns != "" && !have[ns] {
			have[ns] = true
			out = append(out, namespace(ns, "a namespace of "+o.Source))
		}
	}
	return out, nil
}

// Each passes every object as one page.
func (f *Files) Each(_ context.Context, fn func([]evaluate.Object) error) error {
	return fn(f.Objects)
}
