package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/admitd/admitd/internal/server"
	"github.com/admitd/admitd/pkg/admission/trace"
)

// addTraceFlags registers --admission-trace-buffer.
func addTraceFlags(fs *pflag.FlagSet, o *server.Options) {
	o.AdmissionTraceBuffer = trace.DefaultRingSize
	fs.Var((*traceBuffer)(&o.AdmissionTraceBuffer), "admission-trace-buffer",
		"how many recent admission traces the server keeps for /admission/traces and admitd explain (0 keeps none)")
}

// traceBuffer is the flag's value: the flag's 0 (keep none) is the
// option's negative.
type traceBuffer int

func (t *traceBuffer) String() string {
	if *t < 0 {
		return "0"
	}
	return strconv.Itoa(int(*t))
}

func (t *traceBuffer) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("must be a non-negative integer, got %q", s)
	}
	if n == 0 {
		n = -1
	}
	*t = traceBuffer(n)
	return nil
}

func (*traceBuffer) Type() string { return "int" }
