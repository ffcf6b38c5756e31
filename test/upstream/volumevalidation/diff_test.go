// Package volumevalidation compares admitd's VolumeAttachment and
// VolumeAttributesClass strategies (internal/registry: decoding defaults,
// then the preparation and validation of a create, an update or an
// attachment's status write) with kube-apiserver's: v1 defaulting
// (pkg/apis/storage/v1), then the strategies of
// pkg/registry/storage/{volumeattachment,volumeattributesclass} (and the
// attachment's status strategy) through k8s.io/apiserver's
// rest.ValidateCreate and rest.ValidateUpdate, which add the common
// metadata checks and 1.37's declarative validation (VolumeAttachment has
// enforced beta rules), on the internal objects kube-apiserver decodes,
// with every feature gate at its default.
//
// Compared: the defaulted object, the object as prepared for storage, every
// error (type, field, detail, message; in order, but for metadata errors
// on update, compared as sets as upstream checks metadata several times,
// and for parameters errors, which come in map order) and the warnings
// (none on either side). Attachments carry inline volume specs too, which
// are validated as PersistentVolume specs in the context of inline volumes.
package volumevalidation

import (
	"fmt"
	"os"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	"k8s.io/kubernetes/pkg/registry/storage/volumeattachment"
	"k8s.io/kubernetes/pkg/registry/storage/volumeattributesclass"

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
	case *storagev1.VolumeAttachment:
		if status {
			return volumeattachment.StatusStrategy, "volumeattachments", &storagev1.VolumeAttachment{}
		}
		return volumeattachment.Strategy, "volumeattachments", &storagev1.VolumeAttachment{}
	case *storagev1.VolumeAttributesClass:
		return volumeattributesclass.Strategy, "volumeattributesclasses", &storagev1.VolumeAttributesClass{}
	}
	panic(fmt.Sprintf("not a volume object: %T", obj))
}

var differ = strategydiff.Differ{Group: storagev1.GroupName, Strategy: upstreamStrategy,
	MapOrdered: func(field string) bool { return field == "parameters" }}

type (
	write = strategydiff.Write
	tally = strategydiff.Tally
)

func compare(t *testing.T, cat *registry.Catalogue, w write, c *tally) {
	t.Helper()
	differ.Compare(t, cat, w, c)
}
