// Package quietklog turns klog off for the differential tests: upstream's
// plugins log as they are built and as they refuse audit annotations, which
// would mix into benchmark output lines and test logs that are compared, not read.
package quietklog

import (
	"flag"
	"io"

	"k8s.io/klog/v2"
)

// Silence sends every klog line to io.Discard. Call it from TestMain before m.Run.
func Silence() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	klog.SetOutput(io.Discard)
}

// SilenceErrors is Silence that also keeps errors off stderr: declarative
// validation logs, as errors, every mismatch it finds between its errors
// and the handwritten ones, which the validation differentials provoke.
func SilenceErrors() {
	Silence()
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("stderrthreshold", "FATAL")
}
