package lint

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// decodeObjects reads a stream of YAML documents or JSON objects, as
// k8s.io/apimachinery's YAMLOrJSONDecoder does, a document at a time. A
// List document is held as its text while its items are decoded and
// passed on one at a time: a dump of many objects is never held decoded.
func decodeObjects(r io.Reader, source string, add func(*unstructured.Unstructured, string) error) error {
	br := bufio.NewReaderSize(r, guessSize)
	head, _ := br.Peek(guessSize)
	next := yamlDocuments(br)
	if utilyaml.IsJSONBuffer(head) {
		next = jsonDocuments(br)
	}
	for doc := 1; ; doc++ {
		d, err := next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: document %d: %w", source, doc, err)
		}
		if err := d.each(source, doc, add); err != nil {
			return err
		}
	}
}

// guessSize is how far the stream is read to tell JSON from YAML, as
// eval and lint always have.
const guessSize = 4096

// document is one document of a stream: its text, and whether it is JSON
// (else YAML).
type document struct {
	text   []byte
	isJSON bool
}

func jsonDocuments(r io.Reader) func() (document, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(r, guessSize)
	return func() (document, error) {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		return document{text: raw, isJSON: true}, err
	}
}

func yamlDocuments(r *bufio.Reader) func() (document, error) {
	rd := utilyaml.NewYAMLReader(r)
	return func() (document, error) {
		text, err := rd.Read()
		return document{text: text}, err
	}
}

// each passes the document's object, or the items of a List, to add.
func (d document) each(file string, doc int, add func(*unstructured.Unstructured, string) error) error {
	source := fmt.Sprintf("%s#%d", file, doc)
	if d.isJSON {
		if items, ok := jsonListItems(d.text); ok {
			return eachJSONItem(items, source, add)
		}
	} else if l, ok := scanYAMLList(d.text); ok {
		return l.each(d.text, source, add)
	}
	var content map[string]any
	if len(d.text) > 0 {
		var err error
		if d.isJSON {
			err = json.Unmarshal(d.text, &content)
		} else {
			err = yaml.Unmarshal(d.text, &content)
		}
		if err != nil {
			return fmt.Errorf("%s: document %d: %w", file, doc, err)
		}
	}
	if len(content) == 0 {
		return nil
	}
	return addContent(content, source, add)
}

// item passes one item of a List, decoded, to add.
func item(v any, source string, i int, add func(*unstructured.Unstructured, string) error) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: items[%d] is not an object", source, i)
	}
	return addContent(m, fmt.Sprintf("%s.items[%d]", source, i), add)
}
