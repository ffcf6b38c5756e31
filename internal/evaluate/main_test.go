package evaluate

import (
	"flag"
	"io"
	"os"
	"testing"

	"k8s.io/klog/v2"
)

// TestMain silences klog: the in-process servers' libraries log through it
// when they stop ("store closed"), which interleaves with benchmark output.
func TestMain(m *testing.M) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	os.Exit(m.Run())
}
