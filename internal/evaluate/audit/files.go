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
// read twice, an object at a time: by LoadFiles, which keeps only the
// namespaces and CRDs, and again as the objects are audited; a List
// document is held whole while its items are audited. Standard input
// ("-") is read once and held.
type Files struct {
	// Objects are objects held in memory: given, or read from standard
	// input.
	Objects []evaluate.Object
	// Paths are the files and directories read as the objects are
	// audited, after Objects.
	Paths []string

	// seed are the namespaces and CRDs of Paths and a namespace for every
	// other namespace of their objects (see Seed).
	seed []evaluate.Object
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
	var s seeds
	if err := readObjects(paths, func(o evaluate.Object) error { s.note(o); return nil }); err != nil {
		return nil, err
	}
	return &Files{Paths: paths, seed: s.objects()}, nil
}

// seeds collects what objects need in the evaluation.
type seeds struct {
	kept []evaluate.Object
	// namespaces are the namespaces of the objects, in the order they are
	// first met, as namespaces without labels.
	namespaces []evaluate.Object
	seen       map[string]bool
}

func (s *seeds) note(o evaluate.Object) {
	if kept(o.GroupVersionKind()) {
		s.kept = append(s.kept, o)
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if ns := o.GetNamespace(); ns != "" && !s.seen[ns] {
		s.seen[ns] = true
		s.namespaces = append(s.namespaces, namespace(ns, "a namespace of "+o.Source))
	}
}

// objects are the namespaces and CRDs, then a namespace for each other
// namespace an object is in.
func (s *seeds) objects() []evaluate.Object {
	out := slices.Clone(s.kept)
	have := map[string]bool{}
	for _, o := range s.kept {
		if o.GetKind() == "Namespace" {
			have[o.GetName()] = true
		}
	}
	for _, ns := range s.namespaces {
		if !have[ns.GetName()] {
			out = append(out, ns)
		}
	}
	return out
}

// Seed are the namespaces and CRDs of the objects, and a namespace
// without labels for every other namespace an object is in.
func (f *Files) Seed(context.Context) ([]evaluate.Object, error) {
	if len(f.Paths) > 0 {
		return f.seed, nil
	}
	var s seeds
	for _, o := range f.Objects {
		s.note(o)
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
