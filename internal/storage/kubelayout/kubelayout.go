// Package kubelayout stores admitd's objects as kube-apiserver 1.37 stores
// them, so that admitd and a kube-apiserver can share one etcd: it wraps a
// storage.Store (the etcd backend) and translates, in both directions,
//
//   - keys: admitd's /registry/<group>/<resource>/... (layout) become
//     kube-apiserver's /registry/<resource>/... for built-in resources, with
//     upstream's special prefixes (services/specs, minions, controllers,
//     services/endpoints, ingress: SpecialDefaultResourcePrefixes in
//     k8s.io/kubernetes/pkg/kubeapiserver); resources of the
//     apiextensions.k8s.io and apiregistration.k8s.io groups and custom
//     resources keep /registry/<group>/<resource>/, as upstream;
//   - values: built-in kinds are stored in protobuf, in the "k8s\x00"
//     envelope (runtime.Unknown) of their storage version; custom resources
//     and APIServices stay JSON.
//
// Lists and watches of a prefix wider than one resource (a group, or
// everything) read all of /registry/ and keep the keys under the prefix;
// keys of kube-apiserver's own that are no admitd object (masterleases,
// ranges) are left out.
package kubelayout

import (
	"bytes"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/json"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
)

// specialPrefixes are kube-apiserver's resource prefixes that are not the
// resource name.
var specialPrefixes = map[schema.GroupResource]string{
	{Group: "", Resource: "replicationcontrollers"}:     "controllers",
	{Group: "", Resource: "endpoints"}:                  "services/endpoints",
	{Group: "", Resource: "nodes"}:                      "minions",
	{Group: "", Resource: "services"}:                   "services/specs",
	{Group: "networking.k8s.io", Resource: "ingresses"}: "ingress",
}

// groupKeyed are the built-in groups that upstream keys by group and
// resource, as custom resources (served by the apiextensions and
// aggregator servers inside kube-apiserver).
var groupKeyed = map[string]bool{"apiextensions.k8s.io": true, "apiregistration.k8s.io": true}

// jsonStored are the built-in groups whose objects upstream stores in JSON
// (the aggregator's storage codec is its scheme's JSON LegacyCodec), as
// custom resources.
var jsonStored = map[string]bool{"apiregistration.k8s.io": true}

// cohabiting are resources that upstream stores under another group's
// resource; admitd keeps them apart, under its own keys.
var cohabiting = map[schema.GroupResource]bool{{Group: "events.k8s.io", Resource: "events"}: true}

// mapping is the translation table, built from the built-in resources.
type mapping struct {
	toKube   map[string]string                  // admitd resource prefix -> kube prefix
	fromKube map[string]string                  // kube prefix -> admitd resource prefix
	kinds    map[string]schema.GroupVersionKind // admitd resource prefix -> storage kind
	proto    *protobuf.Serializer
}

func newMapping(builtin []*registry.Resource) *mapping {
	m := &mapping{toKube: map[string]string{}, fromKube: map[string]string{}, kinds: map[string]schema.GroupVersionKind{},
		proto: protobuf.NewSerializer(registry.Scheme(), registry.Scheme())}
	for _, r := range builtin {
		if r.Unstructured {
			continue
		}
		gr := r.GroupResource()
		ours := layout.ResourcePrefix(r)
		if !jsonStored[r.Group] {
			m.kinds[ours] = gr.WithVersion(r.StorageVersion).GroupVersion().WithKind(r.Kind)
		}
		if groupKeyed[r.Group] || cohabiting[gr] {
			continue
		}
		kube := layout.Root + r.Resource + "/"
		if p, ok := specialPrefixes[gr]; ok {
			kube = layout.Root + p + "/"
		}
		m.toKube[ours], m.fromKube[kube] = kube, ours
	}
	return m
}

// resourcePrefix splits an admitd key (or prefix) into its resource
// prefix and the rest; ok is false when key is no longer than a group.
func resourcePrefix(key string) (prefix, rest string, ok bool) {
	after, found := strings.CutPrefix(key, layout.Root)
	if !found {
		return "", "", false
	}
	first := strings.IndexByte(after, '/')
	if first < 0 {
		return "", "", false
	}
	second := strings.IndexByte(after[first+1:], '/')
	if second < 0 {
		return "", "", false
	}
	end := len(layout.Root) + first + 1 + second + 1
	return key[:end], key[end:], true // slices of key: no allocation
}

// keyToKube maps an admitd key to upstream's.
func (m *mapping) keyToKube(key string) string {
	if prefix, rest, ok := resourcePrefix(key); ok {
		if kube, ok := m.toKube[prefix]; ok {
			return kube + rest
		}
	}
	return key
}

// keyFromKube maps an upstream key back; ok is false for keys that are no
// admitd object. It looks the prefixes up by slices of key, without
// splitting it: every watch event of every watcher passes through here.
func (m *mapping) keyFromKube(key string) (string, bool) {
	after, found := strings.CutPrefix(key, layout.Root)
	if !found {
		return "", false
	}
	first := strings.IndexByte(after, '/')
	if first < 0 {
		return "", false
	}
	root := len(layout.Root)
	// the longest special prefixes have two segments (services/specs)
	if second := strings.IndexByte(after[first+1:], '/'); second >= 0 {
		end := root + first + 1 + second + 1
		if ours, ok := m.fromKube[key[:end]]; ok {
			return ours + key[end:], true
		}
	}
	end := root + first + 1
	if ours, ok := m.fromKube[key[:end]]; ok {
		return ours + key[end:], true
	}
	if strings.Contains(after[:first], ".") { // group-keyed: custom resources, CRDs, APIServices
		return key, true
	}
	return "", false
}

// prefixToKube maps a list or watch prefix: exact when it lies within one
// resource (or one group keyed by group), else the whole root, to filter.
func (m *mapping) prefixToKube(prefix string) (kube string, exact bool) {
	if _, _, ok := resourcePrefix(prefix); ok {
		return m.keyToKube(prefix), true
	}
	group, found := strings.CutPrefix(prefix, layout.Root)
	if found && strings.HasSuffix(group, "/") && strings.Count(group, "/") == 1 && !m.builtinGroup(strings.TrimSuffix(group, "/")) {
		return prefix, true
	}
	return layout.Root, false
}

// builtinGroup reports whether some built-in resource of group is keyed
// by resource name alone.
func (m *mapping) builtinGroup(group string) bool {
	for ours := range m.toKube {
		if strings.HasPrefix(ours, layout.GroupPrefix(group)) {
			return true
		}
	}
	return false
}

// protoMagic starts every protobuf value kube-apiserver stores.
var protoMagic = []byte("k8s\x00")

// valueToKube encodes the JSON value of an admitd key as upstream stores
// it: protobuf for built-in kinds.
func (m *mapping) valueToKube(key string, value []byte) ([]byte, error) {
	prefix, _, ok := resourcePrefix(key)
	gvk, builtin := m.kinds[prefix]
	if !ok || !builtin || len(value) == 0 {
		return value, nil
	}
	obj, err := registry.Scheme().New(gvk)
	if err != nil {
		return nil, fmt.Errorf("kubelayout: %s: %w", key, err)
	}
	if err := json.Unmarshal(value, obj); err != nil {
		return nil, fmt.Errorf("kubelayout: decoding %s: %w", key, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	var buf bytes.Buffer
	if err := m.proto.Encode(obj, &buf); err != nil {
		return nil, fmt.Errorf("kubelayout: encoding %s: %w", key, err)
	}
	return buf.Bytes(), nil
}

// decodable reports whether admitd can read the value of key: a protobuf
// value of a kind admitd does not serve (an APIService, say) is not.
func (m *mapping) decodable(key string, value []byte) bool {
	if !bytes.HasPrefix(value, protoMagic) {
		return true
	}
	prefix, _, _ := resourcePrefix(key)
	_, ok := m.kinds[prefix]
	return ok
}

// isProto reports whether a stored value is kube-apiserver's protobuf.
func isProto(value []byte) bool { return bytes.HasPrefix(value, protoMagic) }

// valueFromKube turns a stored value back into admitd's JSON.
func (m *mapping) valueFromKube(key string, value []byte) ([]byte, error) {
	if !bytes.HasPrefix(value, protoMagic) {
		return value, nil
	}
	obj, gvk, err := m.proto.Decode(value, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("kubelayout: decoding %s: %w", key, err)
	}
	if prefix, _, ok := resourcePrefix(key); ok {
		if want, ok := m.kinds[prefix]; ok && want != *gvk {
			// written in another version (an older kube-apiserver's
			// storage version): admitd reads its own
			if obj, err = registry.ConvertTo(obj, want); err != nil {
				return nil, fmt.Errorf("kubelayout: %s: %w", key, err)
			}
			*gvk = want
		}
	}
	obj.GetObjectKind().SetGroupVersionKind(*gvk)
	return json.Marshal(obj)
}

var _ runtime.Object = (*runtime.Unknown)(nil)

// UpstreamKey is the key kube-apiserver 1.37 keeps an object of res under,
// as its storage errors name it: /registry/<resource>/[<namespace>/]<name>
// with upstream's special prefixes (services/specs, minions, ...), and
// /registry/<group>/<resource>/... for custom resources and the groups
// upstream keys so (apiextensions.k8s.io, apiregistration.k8s.io).
func UpstreamKey(res *registry.Resource, namespace, name string) string {
	prefix := res.Resource
	if p, ok := specialPrefixes[res.GroupResource()]; ok {
		prefix = p
	} else if res.Unstructured || groupKeyed[res.Group] {
		prefix = res.Group + "/" + res.Resource
	}
	if namespace != "" {
		return layout.Root + prefix + "/" + namespace + "/" + name
	}
	return layout.Root + prefix + "/" + name
}
