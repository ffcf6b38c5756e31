// Package manifest reads what the admission plugins load from files rather
// than from the API: their section of the AdmissionConfiguration (a
// kubeconfig for webhooks, a static manifest directory for webhooks and
// policies) and the configuration objects of a static manifest directory,
// with the checks and the hot reload upstream 1.37 applies to them.
//
// It knows nothing of webhooks or policies: each plugin decodes and checks
// its own kinds from the documents this package reads.
package manifest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Suffix ends the name of every configuration of a static manifest
// directory; the API refuses such names.
const Suffix = ".static.k8s.io"

// Document is one object of a manifest file, as JSON.
type Document struct {
	File       string
	APIVersion string
	Kind       string
	JSON       []byte
}

// ReadDir reads every non-empty .yaml, .yml and .json file directly in dir
// (sub-directories are ignored), in name order, splits YAML streams into
// documents, expands v1 List and <Kind>List objects into their items, and
// returns the documents with the directory's change hash: SHA-256 over
// each non-empty file followed by a zero byte, "" for no data.
func ReadDir(dir string) ([]Document, string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, "", err
	}
	var docs []Document
	h := sha256.New()
	hashed := false
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if e.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, "", err
		}
		if len(data) == 0 {
			continue
		}
		h.Write(data)
		h.Write([]byte{0})
		hashed = true
		fileDocs, err := splitFile(e.Name(), data)
		if err != nil {
			return nil, "", fmt.Errorf("error loading %s: %w", e.Name(), err)
		}
		docs = append(docs, fileDocs...)
	}
	hash := ""
	if hashed {
		hash = "sha256:" + hex.EncodeToString(h.Sum(nil))
	}
	return docs, hash, nil
}

func splitFile(file string, data []byte) ([]Document, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []Document
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if out, err = appendDocument(out, file, j); err != nil {
			return nil, err
		}
	}
}

// appendDocument adds a document, or the items of a list.
func appendDocument(out []Document, file string, j []byte) ([]Document, error) {
	var tm struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(j, &tm); err != nil {
		return nil, err
	}
	if !strings.HasSuffix(tm.Kind, "List") {
		return append(out, Document{File: file, APIVersion: tm.APIVersion, Kind: tm.Kind, JSON: j}), nil
	}
	for _, item := range tm.Items {
		var err error
		if out, err = appendDocument(out, file, item); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DecodeStrict decodes JSON into obj; unknown and duplicate fields are errors.
func DecodeStrict(data []byte, into any) error {
	strict, err := sigsjson.UnmarshalStrict(data, into, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// UnsupportedType is the error for a document of a kind the plugin does
// not load.
func UnsupportedType(d Document) error {
	return fmt.Errorf("error loading %s: unsupported resource type %s, Kind=%s", d.File, d.APIVersion, d.Kind)
}

// Names checks the names of a directory's configurations: present, ending
// in Suffix, unique per key (e.g. kind).
type Names map[string]string

// Check records name (under key) from file.
func (n Names) Check(file, key, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("resource in file %q must have a name", file)
	case !strings.HasSuffix(name, Suffix):
		return fmt.Errorf("%q in file %q must have a name ending with %q", name, file, Suffix)
	}
	k := key + "/" + name
	if prev, dup := n[k]; dup {
		return fmt.Errorf("duplicate name %q found in file %q (previously seen in %q)", name, file, prev)
	}
	n[k] = file
	return nil
}
