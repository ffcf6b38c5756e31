package audit

import (
	"context"
	"errors"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/admitd/admitd/internal/evaluate"
	"github.com/admitd/admitd/pkg/lint"
)

// Files are objects read from files: List documents, multi-document
// YAML, JSON, directories (as `admitd eval -f` reads them). Files are
// read an object at a time: by LoadFiles, which keeps only the namespaces
// and CRDs; by Seed, for the params, when bindings read params; and again
// as the objects are audited. A List document is held whole while its
// items are audited. Standard input ("-") is read once and held.
type Files struct {
	// Objects are objects held in memory: given, or read from standard
	// input.
	Objects []evaluate.Object
	// Paths are the files and directories read as the objects are
	// audited, after Objects.
	Paths []string

	// seeds are the namespaces and CRDs of Paths and a namespace for
	// every other namespace of their objects (see Seed).
	seeds seeds
}

// LoadFiles reads the files and directories once, to check that they
// decode and to keep what the evaluation is seeded with.
func LoadFiles(paths ...string) (*Files, error) {
	if slices.Contains(paths, "-") {
		objs, err := evaluate.LoadObjects(paths...)
		if err != nil {
			return nil, err
		}
		return &Files{Objects: objs}, nil
	}
	f := &Files{Paths: paths}
	if err := readObjects(paths, func(o evaluate.Object) error { f.seeds.note(o); return nil }); err != nil {
		return nil, err
	}
	return f, nil
}

// Seed are the namespaces, CRDs and params of the objects, and a
// namespace without labels for every other namespace an object is in.
func (f *Files) Seed(_ context.Context, params Params) ([]evaluate.Object, error) {
	s := f.seeds.clone()
	for _, o := range f.Objects {
		s.note(o)
		if params.Match(o) {
			s.keep(o)
		}
	}
	if params.Empty() {
		return s.objects(), nil
	}
	err := readObjects(f.Paths, func(o evaluate.Object) error {
		if params.Match(o) {
			s.keep(o)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.objects(), nil
}

// Each passes the objects held as one page, then the objects of the
// files one at a time.
func (f *Files) Each(_ context.Context, fn func([]evaluate.Object) error) error {
	if len(f.Objects) > 0 {
		if err := fn(f.Objects); err != nil {
			return err
		}
	}
	return readObjects(f.Paths, func(o evaluate.Object) error {
		if err := fn([]evaluate.Object{o}); err != nil {
			return &callbackError{err: err}
		}
		return nil
	})
}

// readObjects calls fn with each object of the files; the files' errors
// are *evaluate.ConfigError.
func readObjects(paths []string, fn func(evaluate.Object) error) error {
	if len(paths) == 0 {
		return nil
	}
	err := lint.ReadObjects(func(u *unstructured.Unstructured, source string) error {
		return fn(evaluate.Object{Unstructured: u, Source: source})
	}, paths...)
	var ce *callbackError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return ce.err
	}
	return &evaluate.ConfigError{Err: err}
}

// callbackError is an error of the audit of an object, not of the files.
type callbackError struct{ err error }

func (e *callbackError) Error() string { return e.err.Error() }
