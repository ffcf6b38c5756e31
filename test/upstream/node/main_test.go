package node

import (
	"io"
	"os"
	"testing"

	"k8s.io/klog/v2"
)

// TestMain silences upstream's klog lines (one cache-sync message per
// generated cluster).
func TestMain(m *testing.M) {
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	os.Exit(m.Run())
}
