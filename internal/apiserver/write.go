package apiserver

import (
	"math/rand/v2"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/admitd/admitd/internal/registry"
)

var emptyGVK = schema.GroupVersionKind{}

var errNamespaceMismatch = apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")

// ensureNamespace makes the object's namespace agree with the request's, as
// upstream: an empty one is filled, a cluster-scoped object's is cleared.
func ensureNamespace(requestNamespace string, obj metav1.Object) error {
	switch got := obj.GetNamespace(); {
	case got == requestNamespace:
	case got == "":
		obj.SetNamespace(requestNamespace)
	case requestNamespace == "":
		obj.SetNamespace("")
	default:
		return errNamespaceMismatch
	}
	return nil
}

// objectNamespace is the namespace objects of res carry in a request to ns.
func objectNamespace(res *registry.Resource, ns string) string {
	if !res.Namespaced {
		return ""
	}
	return ns
}

// wipeSystemFields clears what a client may not set on create.
func wipeSystemFields(m metav1.Object) {
	m.SetCreationTimestamp(metav1.Time{})
	m.SetUID("")
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetSelfLink("")
}

// fillSystemFields sets uid and creationTimestamp, and the name from
// generateName (by res's rule), as upstream's BeforeCreate.
func (s *Server) fillSystemFields(res *registry.Resource, m metav1.Object) {
	m.SetCreationTimestamp(metav1.NewTime(s.cfg.Now().Truncate(1e9)))
	m.SetUID(types.UID(uuid.NewUUID()))
	if m.GetName() == "" && m.GetGenerateName() != "" {
		generate := generatedName
		if res.Strategy.GenerateName != nil {
			generate = res.Strategy.GenerateName
		}
		m.SetName(generate(m.GetGenerateName()))
	}
}

// maxGeneratedNameBase is how much of generateName upstream keeps: a name
// of 63 characters at most (a DNS label) with the 5 random ones.
const maxGeneratedNameBase = 63 - 5

// generatedName is base, cut to maxGeneratedNameBase, and 5 random
// characters, as upstream's name generator makes it.
func generatedName(base string) string {
	if len(base) > maxGeneratedNameBase {
		base = base[:maxGeneratedNameBase]
	}
	return base + randomSuffix()
}

const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

func randomSuffix() string {
	b := make([]byte, 5)
	for i := range b {
		b[i] = suffixAlphabet[rand.IntN(len(suffixAlphabet))]
	}
	return string(b)
}

// invalid turns field errors into upstream's 422.
func invalid(res *registry.Resource, obj runtime.Object, errs field.ErrorList) error {
	kind := obj.GetObjectKind().GroupVersionKind().GroupKind()
	if kind.Kind == "" {
		kind = res.GroupVersionKind().GroupKind()
	}
	return apierrors.NewInvalid(kind, accessor(obj).GetName(), errs)
}

// decodeOptions reads CreateOptions/UpdateOptions/PatchOptions from the query.
func decodeOptions(r *http.Request, into runtime.Object) error {
	if err := metainternalscheme.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, into); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}

func parseCreateOptions(r *http.Request) (*metav1.CreateOptions, error) {
	opts := &metav1.CreateOptions{}
	// Without a query the options are all empty, which decode to nothing
	// and are valid: most creates skip the reflection of both.
	if r.URL.RawQuery != "" {
		if err := decodeOptions(r, opts); err != nil {
			return nil, err
		}
		if errs := metavalidation.ValidateCreateOptions(opts); len(errs) > 0 {
			return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "CreateOptions"}, "", errs)
		}
	}
	opts.TypeMeta = metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "CreateOptions"}
	return opts, nil
}

func parseUpdateOptions(r *http.Request) (*metav1.UpdateOptions, error) {
	opts := &metav1.UpdateOptions{}
	if err := decodeOptions(r, opts); err != nil {
		return nil, err
	}
	if errs := metavalidation.ValidateUpdateOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "UpdateOptions"}, "", errs)
	}
	opts.TypeMeta = metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "UpdateOptions"}
	return opts, nil
}

// strictDecoding applies the fieldValidation directive to the unknown and
// duplicate fields found while decoding.
func strictDecoding(rq *request, directive string, strictErrs []error) error {
	if len(strictErrs) == 0 {
		return nil
	}
	switch directive {
	case metav1.FieldValidationStrict:
		msg := "strict decoding error: "
		for i, e := range strictErrs {
			if i > 0 {
				msg += ", "
			}
			msg += e.Error()
		}
		return apierrors.NewBadRequest(msg)
	case metav1.FieldValidationIgnore:
		return nil
	default:
		addStrictDecodingWarnings(rq, strictErrs)
		return nil
	}
}

// addStrictDecodingWarnings adds a warning per strict decoding error, and
// per line of a YAML one, as upstream does.
func addStrictDecodingWarnings(rq *request, errs []error) {
	for _, e := range errs {
		for _, w := range yamlWarnings(e.Error()) {
			rq.record.AddWarning(w)
		}
	}
}

// yamlWarnings splits a YAML strict decoding error into its lines (a
// warning cannot hold a line break); any other error is one warning.
func yamlWarnings(msg string) []string {
	rest, ok := strings.CutPrefix(msg, "yaml: unmarshal errors:\n")
	if !ok {
		if rest, ok = strings.CutPrefix(msg, "error converting YAML to JSON: yaml: unmarshal errors:\n"); !ok {
			return []string{msg}
		}
	}
	lines := strings.Split(rest, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return lines
}
