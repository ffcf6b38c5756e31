package apiserver

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metainternalvalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/admitd/admitd/pkg/features"
)

// watchListEnabled is kube-apiserver 1.37's WatchList gate (on): a watch
// from "" or "0" without sendInitialEvents is defaulted to one that sends
// them, and sendInitialEvents is accepted on watches. It is read on first
// use: the feature gates' defaults are built then, not at start.
var watchListEnabled = sync.OnceValue(func() bool { return features.Default("WatchList") })

// decodeListOptions reads a list or watch request's query as upstream's
// list handler does: the parameter codec (a parameter that does not parse
// is a 400 with the parser's message), the WatchList defaults, then the
// ListOptions validation (a 422 naming ListOptions.meta.k8s.io).
func decodeListOptions(q url.Values) (*metainternalversion.ListOptions, error) {
	var opts metainternalversion.ListOptions
	if err := metainternalscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, &opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	metainternalversion.SetListOptionsDefaults(&opts, watchListEnabled())
	if errs := metainternalvalidation.ValidateListOptions(&opts, watchListEnabled()); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	return &opts, nil
}

// parseResourceVersion reads a resourceVersion as upstream's storage does
// (unsigned; "" is 0); what does not parse is a field error on
// resourceVersion.
func parseResourceVersion(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	if err == nil && n > 1<<63-1 {
		err = strconv.ErrRange
	}
	if err != nil {
		return 0, field.Invalid(field.NewPath("resourceVersion"), rv, err.Error())
	}
	return int64(n), nil
}

// invalidListResourceVersion is upstream's answer to a list at a
// resourceVersion that does not parse: a 400.
func invalidListResourceVersion(err error) error {
	return apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %v", err))
}

// continueToken is upstream's continue token: the key to start from,
// relative to the list's prefix, and the revision of the first page.
type continueToken struct {
	APIVersion string `json:"v"`
	RV         int64  `json:"rv"`
	Start      string `json:"start"`
}

// errInvalidContinue is upstream's reason for a token it cannot read.
var errInvalidContinue = errors.New("continue key is not valid")

// encodeContinue is the token continuing a list of prefix at key.
func encodeContinue(key, prefix string, rev int64) string {
	b, _ := json.Marshal(continueToken{APIVersion: "meta.k8s.io/v1", RV: rev, Start: strings.TrimPrefix(key, prefix)})
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeContinue reads a continue token of a list of prefix as upstream's
// storage does: its start key is relative to the prefix and may not leave
// it (no "..", no "//"); errors are upstream's 400 "invalid continue
// token".
func decodeContinue(token, prefix string) (key string, rev int64, err error) {
	key, rev, err = readContinue(token, prefix)
	if err != nil {
		return "", 0, apierrors.NewBadRequest(fmt.Sprintf("invalid continue token: %v", err))
	}
	return key, rev, nil
}

func readContinue(token, prefix string) (string, int64, error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, fmt.Errorf("%w: %v", errInvalidContinue, err)
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return "", 0, fmt.Errorf("%w: %v", errInvalidContinue, err)
	}
	if c.APIVersion != "meta.k8s.io/v1" {
		return "", 0, fmt.Errorf("%w: server does not recognize this encoded version %v", errInvalidContinue, c.APIVersion)
	}
	if c.RV == 0 {
		return "", 0, fmt.Errorf("%w: incorrect encoded start resourceVersion (version meta.k8s.io/v1)", errInvalidContinue)
	}
	if c.Start == "" {
		return "", 0, fmt.Errorf("%w: encoded start key empty (version meta.k8s.io/v1)", errInvalidContinue)
	}
	key := c.Start
	if !strings.HasPrefix(key, "/") {
		key = "/" + key
	}
	if path.Clean(key) != key {
		return "", 0, fmt.Errorf("%w: %v", errInvalidContinue, c.Start)
	}
	return strings.TrimSuffix(prefix, "/") + key, c.RV, nil
}
