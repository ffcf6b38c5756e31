// Package storagemigrationvalidation compares admitd's
// StorageVersionMigration strategy (internal/registry: decoding, then the
// preparation and validation of a create, an update or a status write)
// with kube-apiserver's: v1 decoding (no defaults), then the strategy and
// status strategy of pkg/registry/storagemigration/storagemigration
// through k8s.io/apiserver's rest.ValidateCreate and rest.ValidateUpdate
// (common metadata checks and 1.37's declarative validation, whose rules
// of this kind are alpha and so only shadow, but which drops a
// handwritten error repeating an earlier message), on the internal
// objects kube-apiserver decodes, with every feature gate at its default.
//
// Compared: the defaulted object, the object as prepared for storage
// (status emptied on create and kept on update; on a status write the
// stored spec and the metadata a status strategy resets), every error
// (type, field, detail, message; in order, but for metadata errors on
// update, compared as sets as upstream checks metadata twice) and the
// warnings (none on either side).
package storagemigrationvalidation

import (
	"os"
	"testing"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	_ "k8s.io/kubernetes/pkg/apis/storagemigration/install"
	"k8s.io/kubernetes/pkg/registry/storagemigration/storagemigration"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/test/upstream/internal/quietklog"
	"github.com/admitd/admitd/test/upstream/internal/strategydiff"
)

func TestMain(m *testing.M) {
	quietklog.SilenceErrors()
	os.Exit(m.Run())
}

// upstreamStrategy is the strategy, or the status strategy for a status
// write, with its resource and a new v1 object.
func upstreamStrategy(_ runtime.Object, status bool) (strategydiff.Strategy, string, runtime.Object) {
	if status {
		return storagemigration.StatusStrategy, "storageversionmigrations", &storagemigrationv1.StorageVersionMigration{}
	}
	return storagemigration.Strategy, "storageversionmigrations", &storagemigrationv1.StorageVersionMigration{}
}

var differ = strategydiff.Differ{Group: storagemigrationv1.GroupName, Strategy: upstreamStrategy}

type (
	write = strategydiff.Write
	tally = strategydiff.Tally
)

func compare(t *testing.T, cat *registry.Catalogue, w write, c *tally) {
	t.Helper()
	differ.Compare(t, cat, w, c)
}
