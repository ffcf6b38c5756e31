package lint

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Load reads every object of the YAML or JSON files named by paths into a
// new Set. A directory is read recursively (files ending in .yaml, .yml or
// .json); "-" reads standard input.
func Load(paths ...string) (*Set, error) {
	s := &Set{}
	for _, p := range paths {
		if err := s.loadPath(p); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Set) loadPath(p string) error {
	if p == "-" {
		return s.Decode(os.Stdin, "<stdin>")
	}
	info, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return s.loadFile(p)
	}
	return filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".json":
			return s.loadFile(path)
		}
		return nil
	})
}

func (s *Set) loadFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return s.Decode(f, path)
}

// Decode reads a stream of YAML documents or JSON objects; a List (kind
// ending in "List" with items) contributes its items. Documents that are
// empty are skipped; a document without apiVersion or kind is an error.
func (s *Set) Decode(r io.Reader, source string) error {
	dec := utilyaml.NewYAMLOrJSONDecoder(bufio.NewReader(r), 4096)
	for doc := 1; ; doc++ {
		var content map[string]any
		err := dec.Decode(&content)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: document %d: %w", source, doc, err)
		}
		if len(content) == 0 {
			continue
		}
		if err := s.addContent(content, fmt.Sprintf("%s#%d", source, doc)); err != nil {
			return err
		}
	}
}

func (s *Set) addContent(content map[string]any, source string) error {
	u := &unstructured.Unstructured{Object: content}
	if u.GetAPIVersion() == "" || u.GetKind() == "" {
		return fmt.Errorf("%s: object has no apiVersion or kind", source)
	}
	if items, ok := content["items"].([]any); ok && strings.HasSuffix(u.GetKind(), "List") {
		for i, item := range items {
			m, ok := item.(map[string]any)
			if !ok {
				return fmt.Errorf("%s: items[%d] is not an object", source, i)
			}
			if err := s.addContent(m, fmt.Sprintf("%s.items[%d]", source, i)); err != nil {
				return err
			}
		}
		return nil
	}
	return s.Add(u, source)
}
