package lint

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Load reads every object of the YAML or JSON files named by paths into a
// new Set. A directory is read recursively (files ending in .yaml, .yml or
// .json); "-" reads standard input.
func Load(paths ...string) (*Set, error) {
	s := &Set{}
	if err := ReadObjects(s.add, paths...); err != nil {
		return nil, err
	}
	return s, nil
}

// ReadObjects reads the files named by paths as Load does and passes every
// object, in the order read, to add with where it came from ("file#3", a
// List's item "file#1.items[0]"). Directories are walked in lexical order.
func ReadObjects(add func(u *unstructured.Unstructured, source string) error, paths ...string) error {
	for _, p := range paths {
		if err := readPath(p, add); err != nil {
			return err
		}
	}
	return nil
}

// ReadStream reads the objects of r, YAML documents or JSON objects, as
// ReadObjects reads a file, with source naming r ("source#3").
func ReadStream(r io.Reader, source string, add func(u *unstructured.Unstructured, source string) error) error {
	return decodeObjects(r, source, add)
}

func readPath(p string, add func(*unstructured.Unstructured, string) error) error {
	if p == "-" {
		return decodeObjects(os.Stdin, "<stdin>", add)
	}
	info, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return readFile(p, add)
	}
	return filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".json":
			return readFile(path, add)
		}
		return nil
	})
}

func readFile(path string, add func(*unstructured.Unstructured, string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return decodeObjects(f, path, add)
}

// Decode reads a stream of YAML documents or JSON objects; a List (kind
// ending in "List" with items) contributes its items. Documents that are
// empty are skipped; a document without apiVersion or kind is an error.
func (s *Set) Decode(r io.Reader, source string) error {
	return decodeObjects(r, source, s.add)
}

func (s *Set) add(u *unstructured.Unstructured, source string) error { return s.Add(u, source) }

func addContent(content map[string]any, source string, add func(*unstructured.Unstructured, string) error) error {
	u := &unstructured.Unstructured{Object: content}
	if u.GetAPIVersion() == "" || u.GetKind() == "" {
		return fmt.Errorf("%s: object has no apiVersion or kind", source)
	}
	if raw, ok := content["items"]; ok && strings.HasSuffix(u.GetKind(), "List") {
		items, ok := raw.([]any)
		if !ok && raw != nil {
			return fmt.Errorf("%s: items is not a list", source)
		}
		for i, item := range items {
			m, ok := item.(map[string]any)
			if !ok {
				return fmt.Errorf("%s: items[%d] is not an object", source, i)
			}
			if err := addContent(m, fmt.Sprintf("%s.items[%d]", source, i), add); err != nil {
				return err
			}
		}
		return nil
	}
	return add(u, source)
}
