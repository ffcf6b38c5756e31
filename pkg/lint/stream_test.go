package lint

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// wholeDecode is how documents were read before Lists were streamed:
// every document decoded whole, then its items passed on. It is the
// oracle of the streamed decoder.
func wholeDecode(r io.Reader, source string, add func(*unstructured.Unstructured, string) error) error {
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
		if err := addContent(content, fmt.Sprintf("%s#%d", source, doc), add); err != nil {
			return err
		}
	}
}

type decoded struct {
	objects []map[string]any
	sources []string
	failed  bool
}

func decodeWith(decode func(io.Reader, string, func(*unstructured.Unstructured, string) error) error, doc string) decoded {
	var d decoded
	err := decode(strings.NewReader(doc), "f", func(u *unstructured.Unstructured, source string) error {
		d.objects = append(d.objects, u.Object)
		d.sources = append(d.sources, source)
		return nil
	})
	d.failed = err != nil
	return d
}

var listDocs = []string{
	// kubectl get -o yaml
	"apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n    namespace: x\n  data:\n    config.yaml: |\n      key: value\n      - not: an entry\n    n: \"1\"\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: b, labels: {app: web}}\n  spec:\n    containers:\n    - name: c\n      image: img\n      ports:\n      - containerPort: 80\nkind: List\nmetadata:\n  resourceVersion: \"\"\n",
	// items indented, comments, CRLF, quoted kind, a second document
	"kind: \"List\" # a list\r\napiVersion: v1\r\nitems:\r\n  # the first\r\n  - apiVersion: v1\r\n    kind: Secret\r\n    metadata: {name: s}\r\n\r\n  -   apiVersion: v1\r\n      kind: ConfigMap\r\n      metadata: {name: t}\r\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: single}\n",
	// a List in a List, an item that is no object, an entry on its own line
	"apiVersion: v1\nkind: List\nitems:\n-\n  apiVersion: v1\n  kind: List\n  items:\n  - {apiVersion: v1, kind: ConfigMap, metadata: {name: inner}}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: after}\n",
	"apiVersion: v1\nkind: List\nitems:\n- 42\n",
	"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: x}\n- kind: NoVersion\n",
	// not streamed: flow items, no entries, not a List, kind on its own line
	"apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: ConfigMap, metadata: {name: flow}}]\n",
	"apiVersion: v1\nkind: List\nitems:\nmetadata: {}\n",
	"apiVersion: example.com/v1\nkind: Basket\nitems:\n- apple\n- pear\nmetadata: {name: b}\n",
	"apiVersion: v1\nkind:\n  List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}\n",
	"apiVersion: v1\nkind: List\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}\n",
	"- apiVersion: v1\n  kind: List\n",
	"apiVersion: v1\nkind: List\nitems:\n  - {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}\n - bad: indent\n",
	// JSON
	`{"apiVersion":"v1","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"j","annotations":{"a":"[{\"x\":1}]"}},"data":{"n":"1"}},{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"replicas":3.5}}]}],"kind":"List","metadata":{"resourceVersion":""}}
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"second"}}`,
	`{"apiVersion":"v1","kind":"List","items":null}`,
	` { "apiVersion" : "v1" , "items" : [ {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a\\"}} ] , "kind" : "List" , "n" : 1 , "t":true}`,
	`{"apiVersion":"v1","kind":"List","items":[1]}`,
	`{"apiVersion":"v1","kind":"List","items":{"a":1}}`,
	`{"kind":"List","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"j"}}]}`,
	"",
	"---\n# nothing\n---\n",
}

// TestStreamedListsAreReadAsWhole: the streamed decoder passes the same
// objects with the same sources as decoding every document whole, and
// fails where that fails.
func TestStreamedListsAreReadAsWhole(t *testing.T) {
	streamed := map[int]bool{0: true, 1: true, 2: true, 3: true, 4: true, 12: true, 14: true, 15: true}
	for i, doc := range listDocs {
		first, _ := yamlDocuments(bufio.NewReader(strings.NewReader(doc)))()
		if strings.HasPrefix(strings.TrimSpace(doc), "{") {
			first, _ = jsonDocuments(strings.NewReader(doc))()
		}
		_, yamlList := scanYAMLList(first.text)
		_, jsonList := jsonListItems(first.text)
		if got := !first.isJSON && yamlList || first.isJSON && jsonList; got != streamed[i] {
			t.Errorf("document %d: streamed %v, want %v:\n%s", i, got, streamed[i], doc)
		}
		got, want := decodeWith(decodeObjects, doc), decodeWith(wholeDecode, doc)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("document %d:\n%s\nstreamed: %+v\nwhole:    %+v", i, doc, got, want)
		}
	}
}

// FuzzStreamedListIsWhole compares the streamed decoder with whole
// documents on arbitrary input; it errs where whole decoding does not
// only for YAML the streamed decoder does not read (anchors across
// items), which the fuzzer is told to skip.
func FuzzStreamedListIsWhole(f *testing.F) {
	for _, doc := range listDocs {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if strings.ContainsAny(doc, "&*<") {
			return
		}
		got, want := decodeWith(decodeObjects, doc), decodeWith(wholeDecode, doc)
		if want.failed {
			return // the streamed decoder may read the items of a List whose other fields are wrong
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("streamed: %+v\nwhole:    %+v", got, want)
		}
	})
}
