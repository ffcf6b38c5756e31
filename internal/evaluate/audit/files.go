package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/admitd/admitd/internal/evaluate"
	"github.com/admitd/admitd/pkg/lint"
)

// Files are objects read from files: List documents, multi-document
// YAML, JSON, directories (as `admitd eval -f` reads them). Files are
// read an object at a time (a List's items too): by LoadFiles, which
// keeps only the namespaces and CRDs; by Seed, for the params, when
// bindings read params; and again as the objects are audited. Standard
// input ("-") is copied to a temporary file, read as the others; Close
// removes it.
type Files struct {
	// Objects are objects held in memory, audited before Paths.
	Objects []evaluate.Object
	// Paths are the files and directories read as the objects are
	// audited; "-" is standard input, as LoadFiles copied it.
	Paths []string

	// stdin is the copy of standard input.
	stdin string
	// seeds are the namespaces and CRDs of Paths and a namespace for
	// every other namespace of their objects (see Seed).
	seeds seeds
}

// LoadFiles copies standard input, if named, and reads the files and
// directories once, to check that they decode and to keep what the
// evaluation is seeded with.
func LoadFiles(paths ...string) (*Files, error) {
	f := &Files{}
	for _, p := range paths {
		if p == stdinPath {
			if f.stdin != "" {
				continue // standard input is read once
			}
			if err := f.copyStdin(); err != nil {
				return nil, err
			}
		}
		f.Paths = append(f.Paths, p)
	}
	if err := f.read(func(o evaluate.Object) error { f.seeds.note(o); return nil }); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

const stdinPath = "-"

func (f *Files) copyStdin() error {
	tmp, err := os.CreateTemp("", "admitd-audit-stdin-")
	if err != nil {
		return err
	}
	f.stdin = tmp.Name()
	_, err = io.Copy(tmp, os.Stdin)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = f.Close()
		return &evaluate.ConfigError{Err: fmt.Errorf("reading standard input: %w", err)}
	}
	return nil
}

// Close removes the copy of standard input.
func (f *Files) Close() error {
	if f.stdin == "" {
		return nil
	}
	err := os.Remove(f.stdin)
	f.stdin = ""
	return err
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
	err := f.read(func(o evaluate.Object) error {
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
	return f.read(func(o evaluate.Object) error {
		if err := fn([]evaluate.Object{o}); err != nil {
			return &callbackError{err: err}
		}
		return nil
	})
}

// read calls fn with each object of the files, standard input's copy
// as "<stdin>"; the files' errors are *evaluate.ConfigError.
func (f *Files) read(fn func(evaluate.Object) error) error {
	add := func(u *unstructured.Unstructured, source string) error {
		return fn(evaluate.Object{Unstructured: u, Source: source})
	}
	for _, p := range f.Paths {
		var err error
		if p == stdinPath && f.stdin != "" {
			err = readCopy(f.stdin, add)
		} else {
			err = lint.ReadObjects(add, p)
		}
		var ce *callbackError
		switch {
		case errors.As(err, &ce):
			return ce.err
		case err != nil:
			return &evaluate.ConfigError{Err: err}
		}
	}
	return nil
}

func readCopy(path string, add func(*unstructured.Unstructured, string) error) error {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	return lint.ReadStream(in, "<stdin>", add)
}

// callbackError is an error of the audit of an object, not of the files.
type callbackError struct{ err error }

func (e *callbackError) Error() string { return e.err.Error() }
