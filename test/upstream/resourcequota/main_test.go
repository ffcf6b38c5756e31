package resourcequota

import (
	"os"
	"testing"

	"github.com/admitd/admitd/test/upstream/internal/quietklog"
)

func TestMain(m *testing.M) {
	quietklog.Silence()
	os.Exit(m.Run())
}
