// Package csivalidation compares admitd's CSIDriver, CSINode and
// CSIStorageCapacity strategies (internal/registry: decoding defaults,
// then the preparation and validation of a create, an update or a CSINode
// status write, and the warnings) with kube-apiserver's: v1 defaulting
// (pkg/apis/storage/v1), then the strategies of
// pkg/registry/storage/{csidriver,csinode,csistoragecapacity} (and
// csinode's status strategy) through k8s.io/apiserver's rest.ValidateCreate
// and rest.ValidateUpdate, which add the common metadata checks and 1.37's
// declarative validation, on the internal objects kube-apiserver decodes,
// with every feature gate at its default.
//
// Compared: the defaulted object, the object as prepared for storage, every
// error (type, field, detail, message; in order, but for metadata errors
// on update, compared as sets as upstream checks metadata several times,
// and for a selector's matchLabels errors, which come in map order)
// and the warnings (sorted: upstream lists node labels in map order).
package csivalidation

import (
	"fmt"
	"os"
	"strings"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	"k8s.io/kubernetes/pkg/registry/storage/csidriver"
	"k8s.io/kubernetes/pkg/registry/storage/csinode"
	"k8s.io/kubernetes/pkg/registry/storage/csistoragecapacity"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/test/upstream/internal/quietklog"
	"github.com/admitd/admitd/test/upstream/internal/strategydiff"
)

func TestMain(m *testing.M) {
	quietklog.SilenceErrors()
	os.Exit(m.Run())
}

// upstreamStrategy is the strategy of obj's kind (its status strategy for a
// status write), with its resource and a new v1 object of its type.
func upstreamStrategy(obj runtime.Object, status bool) (s strategydiff.Strategy, resource string, blank runtime.Object) {
	switch obj.(type) {
	case *storagev1.CSIDriver:
		return csidriver.Strategy, "csidrivers", &storagev1.CSIDriver{}
	case *storagev1.CSINode:
		if status {
			return csinode.StatusStrategy, "csinodes", &storagev1.CSINode{}
		}
		return csinode.Strategy, "csinodes", &storagev1.CSINode{}
	case *storagev1.CSIStorageCapacity:
		return csistoragecapacity.Strategy, "csistoragecapacities", &storagev1.CSIStorageCapacity{}
	}
	panic(fmt.Sprintf("not a CSI object: %T", obj))
}

var differ = strategydiff.Differ{Group: storagev1.GroupName, Strategy: upstreamStrategy,
	MapOrdered: func(field string) bool { return strings.HasSuffix(field, ".matchLabels") }}

type (
	write = strategydiff.Write
	tally = strategydiff.Tally
)

func compare(t *testing.T, cat *registry.Catalogue, w write, c *tally) {
	t.Helper()
	differ.Compare(t, cat, w, c)
}
