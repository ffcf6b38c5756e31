package endpointslice

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage/memory"
)

func TestNewKeepsWorkersAndBatchPeriod(t *testing.T) {
	c, err := New(Config{Store: memory.New(), Catalogue: registry.NewCatalogue(), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Workers: 3, BatchPeriod: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if c.workers != 3 || c.batchPeriod != 2*time.Second {
		t.Errorf("New(Workers: 3, BatchPeriod: 2s): workers %d, batch period %v", c.workers, c.batchPeriod)
	}
	if c, _ = New(Config{Store: memory.New(), Catalogue: registry.NewCatalogue(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}); c.workers != defaultWorkers {
		t.Errorf("New without Workers: %d workers, want %d", c.workers, defaultWorkers)
	}
}
