package apiserver

// Field management. Every write records in metadata.managedFields which
// field manager set which fields, through the structured-merge-diff field
// manager upstream uses (k8s.io/apimachinery/pkg/util/managedfields):
//
//   - create, update and the JSON, merge and strategic patches record an
//     Update for the request's fieldManager, or a name taken from the
//     User-Agent, after defaulting and before mutating admission
//     (recordUpdate);
//   - server-side apply merges and records in one step (apply.go);
//   - mutating admission may not leave managedFields invalid (admit resets
//     them, with upstream's warning);
//   - a write that would only move managedFields timestamps keeps the old
//     ones, so that it stays a no-op (keepManagedFieldsTimes).

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	extapply "k8s.io/apiextensions-apiserver/pkg/client/applyconfiguration"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	aggregatorapply "k8s.io/kube-aggregator/pkg/client/applyconfiguration"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/builtinschema"
)

// invalidManagedFieldsWarning is upstream's warning when mutating admission
// left metadata.managedFields invalid.
const invalidManagedFieldsWarning = ".metadata.managedFields was in an invalid state after admission; this could be caused by an outdated mutating admission controller; please fix your requests: %v"

// fieldManagers builds one field manager per served resource and
// subresource, on first use.
type fieldManagers struct {
	custom TypeConverterSource

	mu      sync.Mutex
	managed map[fieldManagerKey]fieldManagerEntry
	// byKind are the managers of creates through a subresource of
	// another kind (Eviction, Binding, TokenRequest)
	byKind map[kindManagerKey]*managedfields.FieldManager
}

type kindManagerKey struct {
	kind        schema.GroupVersionKind
	subresource string
}

type fieldManagerKey struct {
	gvr         schema.GroupVersionResource
	subresource string
}

// fieldManagerEntry remembers the catalogue entry a manager was built for:
// a custom resource gets a new entry whenever definitions change, and with
// it a new manager over its current schema.
type fieldManagerEntry struct {
	res     *registry.Resource
	fm      *managedfields.FieldManager
	created *createdFields
}

func newFieldManagers(custom TypeConverterSource) *fieldManagers {
	return &fieldManagers{custom: custom, managed: map[fieldManagerKey]fieldManagerEntry{}, byKind: map[kindManagerKey]*managedfields.FieldManager{}}
}

// get returns the field manager of res (and subresource).
func (f *fieldManagers) get(res *registry.Resource, subresource string) (*managedfields.FieldManager, error) {
	e, err := f.entry(res, subresource)
	return e.fm, err
}

// entry returns the field manager of res (and subresource) with its cache
// of what creates record.
func (f *fieldManagers) entry(res *registry.Resource, subresource string) (fieldManagerEntry, error) {
	key := fieldManagerKey{res.GroupVersionResource, subresource}
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.managed[key]; ok && e.res == res {
		return e, nil
	}
	kind := res.GroupVersionKind()
	tc, conv := f.typeConverter(res), objectConvertor{custom: res}
	def, creater := defaulterFor(res), createrFor(res)
	reset := resetFields(res, subresource)
	newManager := managedfields.NewDefaultFieldManager
	if res.Unstructured {
		newManager = managedfields.NewDefaultCRDFieldManager
	}
	fm, err := newManager(tc, conv, def, creater, kind, kind.GroupVersion(), subresource, reset)
	if err != nil {
		return fieldManagerEntry{}, err
	}
	e := fieldManagerEntry{res: res, fm: fm, created: &createdFields{}}
	f.managed[key] = e
	return e, nil
}

// forKind returns the field manager of writes of a built-in kind through
// subresource, typed by that kind's own schema.
func (f *fieldManagers) forKind(kind schema.GroupVersionKind, subresource string) (*managedfields.FieldManager, error) {
	key := kindManagerKey{kind, subresource}
	f.mu.Lock()
	defer f.mu.Unlock()
	if fm, ok := f.byKind[key]; ok {
		return fm, nil
	}
	obj, err := registry.Scheme().New(kind)
	if err != nil {
		return nil, err
	}
	tc := typesOrDeduced(builtinTypes(), obj)
	fm, err := managedfields.NewDefaultFieldManager(tc, objectConvertor{}, registry.Scheme(), registry.Scheme(), kind, kind.GroupVersion(), subresource, nil)
	if err != nil {
		return nil, err
	}
	f.byKind[key] = fm
	return fm, nil
}

// typeConverter returns the schema of res's kind: the apply-configuration
// schemas client-go, apiextensions-apiserver and kube-aggregator ship for
// built-in kinds, the definition's openAPIV3Schema for custom resources,
// and a deduced schema (maps granular, lists atomic) for anything they do
// not know.
func (f *fieldManagers) typeConverter(res *registry.Resource) managedfields.TypeConverter {
	if res.Unstructured {
		if tc := f.customTypeConverter(res); tc != nil {
			return tc
		}
		return managedfields.NewDeducedTypeConverter()
	}
	tc := builtinTypes()
	switch res.Group {
	case "apiextensions.k8s.io":
		tc = extensionTypes()
	case "apiregistration.k8s.io":
		tc = aggregatorTypes()
	}
	obj, err := layout.NewObject(res)
	if err != nil {
		return managedfields.NewDeducedTypeConverter()
	}
	return typesOrDeduced(tc, obj)
}

// typesOrDeduced is tc when it knows obj's kind, else a deduced schema.
func typesOrDeduced(tc managedfields.TypeConverter, obj runtime.Object) managedfields.TypeConverter {
	if _, err := tc.ObjectToTyped(obj, typed.AllowDuplicates); err == nil {
		return tc
	}
	return managedfields.NewDeducedTypeConverter()
}

// The type converters of the built-in kinds, of apiextensions' and of
// the aggregator's: built once per process, on first use, shared by every
// server in it (tests start many). The built-in kinds' come from an
// embedded copy of client-go's schema (pkg/builtinschema), which
// decodes twenty times faster than client-go's own YAML.
var (
	builtinTypes = sync.OnceValue(func() managedfields.TypeConverter {
		return managedfields.NewSchemeTypeConverter(registry.Scheme(), builtinschema.Parser())
	})
	extensionTypes  = sync.OnceValue(func() managedfields.TypeConverter { return extapply.NewTypeConverter(registry.Scheme()) })
	aggregatorTypes = sync.OnceValue(func() managedfields.TypeConverter { return aggregatorapply.NewTypeConverter(registry.Scheme()) })
)

// resetFields are the fields a write through subresource cannot set, so
// that nobody manages them through it: status on a resource with a status
// subresource, spec on the status subresource (and metadata, when the
// status of a custom resource, which keeps nothing else of the write).
func resetFields(res *registry.Resource, subresource string) map[fieldpath.APIVersion]fieldpath.Filter {
	var set *fieldpath.Set
	switch {
	case subresource == "status" && res.Unstructured:
		set = fieldpath.NewSet(fieldpath.MakePathOrDie("metadata"), fieldpath.MakePathOrDie("spec"))
	case subresource == "status":
		set = fieldpath.NewSet(fieldpath.MakePathOrDie("spec"))
	case subresource == "" && res.StatusSubresource:
		set = fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
	default:
		return nil
	}
	return map[fieldpath.APIVersion]fieldpath.Filter{
		fieldpath.APIVersion(res.GroupVersion().String()): fieldpath.NewExcludeSetFilter(set),
	}
}

// recordUpdate records obj, the result of a write other than an apply to
// live (nil for a create), in obj's managedFields. Like upstream it never
// fails the write: on error obj keeps live's managedFields.
func (s *Server) recordUpdate(rq *request, res *registry.Resource, live, obj runtime.Object, fieldManager string) runtime.Object {
	if rq.apply {
		return obj
	}
	if gvk := obj.GetObjectKind().GroupVersionKind(); !gvk.Empty() && gvk != res.GroupVersionKind() {
		return obj
	}
	fields, err := s.fields.entry(res, rq.info.Subresource)
	created := live == nil
	if err == nil && created {
		live, err = layout.NewObject(res)
	}
	if err != nil {
		s.log.Error("building the field manager", "resource", res.GroupVersionResource.String(), "err", err)
		return obj
	}
	manager := managerName(fieldManager, rq.event.UserAgent)
	if created {
		return fields.created.record(fields.fm, live, obj, manager)
	}
	return fields.fm.UpdateNoErrors(live, obj, manager)
}

// recordWrite records in obj's managedFields the fields manager set as an
// update of live (nil: a create), as a loopback client's write of a
// server's own objects records them. (Not through the cache of created
// fields: the objects a server writes itself are each written once.)
func (s *Server) recordWrite(res *registry.Resource, live, obj runtime.Object, manager string) runtime.Object {
	fields, err := s.fields.entry(res, "")
	if err == nil && live == nil {
		live, err = layout.NewObject(res)
	}
	if err != nil {
		s.log.Error("building the field manager", "resource", res.GroupVersionResource.String(), "err", err)
		return obj
	}
	return fields.fm.UpdateNoErrors(live, obj, manager)
}

// recordSubresourceCreate records a create through a subresource of its
// own kind (an eviction, a binding, a token request) or of the bindings
// resource in obj's managedFields, as upstream's create handler does before
// admission: typed by the body's kind, the managedFields of a subresource's
// body ignored, and no entry when the write sets nothing but metadata (an
// eviction without delete options).
func (s *Server) recordSubresourceCreate(rq *request, res *registry.Resource, obj runtime.Object, fieldManager string) runtime.Object {
	kind := res.GroupVersionKind()
	if sub, ok := res.Subresource(rq.info.Subresource); ok {
		kind = sub.Kind
	}
	if obj.GetObjectKind().GroupVersionKind().Empty() {
		obj.GetObjectKind().SetGroupVersionKind(kind)
	}
	fm, err := s.fields.forKind(kind, rq.info.Subresource)
	if err == nil {
		var live runtime.Object
		if live, err = registry.Scheme().New(kind); err == nil {
			return fm.UpdateNoErrors(live, obj, managerName(fieldManager, rq.event.UserAgent))
		}
	}
	s.log.Error("building the field manager", "resource", res.GroupVersionResource.String(), "subresource", rq.info.Subresource, "kind", kind.String(), "err", err)
	return obj
}

// managerName is the manager a write is recorded for: the fieldManager the
// client gave or, as upstream, the User-Agent up to its first "/" (printable
// characters only, at most FieldManagerMaxLength bytes).
func managerName(fieldManager, userAgent string) string {
	if fieldManager != "" {
		return fieldManager
	}
	product, _, _ := strings.Cut(userAgent, "/")
	var b strings.Builder
	for _, r := range product {
		if !unicode.IsPrint(r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > metavalidation.FieldManagerMaxLength {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// keepManagedFieldsTimes gives obj old's managedFields timestamps when they
// are the only difference between the two: an apply that changes nothing
// must not change the object or its resourceVersion.
func keepManagedFieldsTimes(obj, old runtime.Object) {
	m := accessor(obj)
	cur, prev := m.GetManagedFields(), accessor(old).GetManagedFields()
	if len(cur) == 0 || len(cur) != len(prev) {
		return
	}
	kept := make([]metav1.ManagedFieldsEntry, len(cur))
	moved := false
	for i := range cur {
		kept[i] = cur[i]
		kept[i].Time = prev[i].Time
		if !reflect.DeepEqual(kept[i], prev[i]) {
			return
		}
		moved = moved || !cur[i].Time.Equal(prev[i].Time)
	}
	if !moved {
		return
	}
	m.SetManagedFields(kept)
	a, errA := layout.Encode(obj)
	b, errB := layout.Encode(old)
	if errA != nil || errB != nil || !bytes.Equal(a, b) {
		m.SetManagedFields(cur)
	}
}

// managedFieldsOf returns obj's managedFields; ok is false for objects
// without metadata (options, nil).
func managedFieldsOf(obj runtime.Object) (fields []metav1.ManagedFieldsEntry, ok bool) {
	if obj == nil {
		return nil, false
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, false
	}
	return m.GetManagedFields(), true
}

// resetInvalidManagedFields undoes a mutating plugin's change that left
// the admitted object's managedFields invalid, warning the client.
//
// managedFields that admission left as they were are not checked again:
// the field manager produced them (or kept the stored object's when it
// failed, as upstream's keeps them). Their times may have moved: a
// webhook's JSON keeps whole seconds, and nothing the check looks at
// depends on a time.
func resetInvalidManagedFields(a *admission.Attributes, before []metav1.ManagedFieldsEntry) {
	after, ok := managedFieldsOf(a.Object)
	if !ok || sameManagedFieldsButTimes(before, after) {
		return
	}
	if err := managedfields.ValidateManagedFields(after); err != nil {
		accessor(a.Object).SetManagedFields(before)
		if a.Record != nil {
			a.Record.AddWarning(fmt.Sprintf(invalidManagedFieldsWarning, err))
		}
	}
}

// objectConvertor converts objects between the versions a field manager
// asks for: built-in kinds through the scheme (admitd serves each in one
// version), custom resources through their definition's converter (of
// custom, the resource the manager serves; relabelling without one).
type objectConvertor struct{ custom *registry.Resource }

var _ runtime.ObjectConvertor = objectConvertor{}

func (objectConvertor) Convert(in, out, context any) error {
	return registry.Scheme().Convert(in, out, context)
}

func (c objectConvertor) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok || registry.Scheme().Recognizes(u.GroupVersionKind()) {
		return registry.Scheme().ConvertToVersion(in, target)
	}
	gvk, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()})
	if !ok {
		return nil, fmt.Errorf("%v cannot be converted to %v", u.GroupVersionKind(), target)
	}
	out := []*unstructured.Unstructured{u.DeepCopy()}
	if c.custom != nil && c.custom.Unstructured && gvk.GroupKind() == u.GroupVersionKind().GroupKind() {
		if err := c.custom.ConvertCustomTo(context.Background(), out, gvk.Version); err != nil {
			return nil, err
		}
	}
	out[0].SetGroupVersionKind(gvk)
	return out[0], nil
}

func (objectConvertor) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return registry.Scheme().ConvertFieldLabel(gvk, label, value)
}

// defaulterFunc adapts a function to runtime.ObjectDefaulter.
type defaulterFunc func(runtime.Object)

func (f defaulterFunc) Default(obj runtime.Object) { f(obj) }

// defaulterFor defaults objects of res as its strategy does.
func defaulterFor(res *registry.Resource) runtime.ObjectDefaulter {
	return defaulterFunc(func(obj runtime.Object) {
		if res.Strategy.Default != nil {
			res.Strategy.Default(obj)
		}
	})
}

// createrFunc adapts a function to runtime.ObjectCreater.
type createrFunc func(schema.GroupVersionKind) (runtime.Object, error)

func (f createrFunc) New(gvk schema.GroupVersionKind) (runtime.Object, error) { return f(gvk) }

// createrFor makes empty objects of res's kind, in any of its versions.
func createrFor(res *registry.Resource) runtime.ObjectCreater {
	return createrFunc(func(gvk schema.GroupVersionKind) (runtime.Object, error) {
		if res.Unstructured {
			u := &unstructured.Unstructured{Object: map[string]any{}}
			u.SetGroupVersionKind(gvk)
			return u, nil
		}
		obj, err := registry.Scheme().New(gvk)
		if err != nil {
			return nil, err
		}
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		return obj, nil
	})
}

func copyManagedFields(fields []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	if fields == nil {
		return nil
	}
	out := make([]metav1.ManagedFieldsEntry, len(fields))
	for i := range fields {
		fields[i].DeepCopyInto(&out[i])
	}
	return out
}

func sameManagedFieldsButTimes(a, b []metav1.ManagedFieldsEntry) bool {
	return slices.EqualFunc(a, b, func(x, y metav1.ManagedFieldsEntry) bool {
		return x.Manager == y.Manager && x.Operation == y.Operation && x.APIVersion == y.APIVersion &&
			x.FieldsType == y.FieldsType && x.Subresource == y.Subresource &&
			bytes.Equal(fieldsRaw(x.FieldsV1), fieldsRaw(y.FieldsV1)) &&
			(x.FieldsV1 == nil) == (y.FieldsV1 == nil)
	})
}

func fieldsRaw(f *metav1.FieldsV1) []byte {
	if f == nil {
		return nil
	}
	return f.Raw
}

// customTypeConverter is the configured converter of a custom resource, or
// nil.
func (f *fieldManagers) customTypeConverter(res *registry.Resource) managedfields.TypeConverter {
	if f.custom == nil {
		return nil
	}
	tc := f.custom.TypeConverter(res.GroupVersionKind())
	if tc == nil {
		return nil
	}
	return &perVersionTypes{source: f.custom, own: tc, ownKind: res.GroupVersionKind(), byKind: map[schema.GroupVersionKind]managedfields.TypeConverter{}}
}

// perVersionTypes types a custom resource with the schema of the version
// it is in: the field manager converts objects to the versions of other
// managers' entries (through the conversion webhook) and types them there,
// as upstream's type converter of a definition knows every version. It
// lives as long as its field manager, which is rebuilt when the
// definition changes.
type perVersionTypes struct {
	source  TypeConverterSource
	own     managedfields.TypeConverter
	ownKind schema.GroupVersionKind

	mu     sync.Mutex
	byKind map[schema.GroupVersionKind]managedfields.TypeConverter
}

func (p *perVersionTypes) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	return p.forKind(obj.GetObjectKind().GroupVersionKind()).ObjectToTyped(obj, opts...)
}

// forKind is the converter of gvk's version, or the resource's own.
func (p *perVersionTypes) forKind(gvk schema.GroupVersionKind) managedfields.TypeConverter {
	if gvk == p.ownKind || gvk.Empty() {
		return p.own
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	tc, ok := p.byKind[gvk]
	if !ok {
		tc = p.source.TypeConverter(gvk)
		if tc == nil {
			tc = p.own
		}
		p.byKind[gvk] = tc
	}
	return tc
}

func (p *perVersionTypes) TypedToObject(v *typed.TypedValue) (runtime.Object, error) {
	return p.own.TypedToObject(v)
}
