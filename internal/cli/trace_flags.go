package cli

import (
	"fmt"
	"math"
	"strconv"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/admitd/admitd/internal/server"
	"github.com/admitd/admitd/pkg/admission/trace"
)

// addTraceFlags registers --admission-trace-buffer and
// --admission-trace-buffer-bytes.
func addTraceFlags(fs *pflag.FlagSet, o *server.Options) {
	o.AdmissionTraceBuffer = trace.DefaultRingSize
	fs.Var((*traceBuffer)(&o.AdmissionTraceBuffer), "admission-trace-buffer",
		"how many recent admission traces the server keeps for /admission/traces and admitd explain (0 keeps none)")
	o.AdmissionTraceBytes = trace.DefaultRingBytes
	fs.Var((*traceBytes)(&o.AdmissionTraceBytes), "admission-trace-buffer-bytes",
		"the most memory those traces hold between them, as a quantity (64Mi); the oldest are dropped first (a trace keeps the JSON of the object each mutating webhook or policy changed)")
}

// traceBytes is a byte count written as a quantity (64Mi, 1G, 500000).
type traceBytes int64

func (t *traceBytes) String() string {
	return resource.NewQuantity(int64(*t), resource.BinarySI).String()
}

func (t *traceBytes) Set(s string) error {
	q, err := resource.ParseQuantity(s)
	if err != nil || q.Sign() <= 0 {
		return fmt.Errorf("must be a positive quantity of bytes such as 64Mi, got %q", s)
	}
	if q.Cmp(*resource.NewQuantity(math.MaxInt64, resource.BinarySI)) > 0 {
		return fmt.Errorf("%q is too large", s)
	}
	*t = traceBytes(q.Value()) // a fraction of a byte rounds up
	return nil
}

func (*traceBytes) Type() string { return "quantity" }

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
