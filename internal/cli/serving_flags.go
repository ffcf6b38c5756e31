package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/server"
)

// addServingFlags registers kube-apiserver's connection and request
// lifetime flags, with its defaults.
func addServingFlags(fs *pflag.FlagSet, o *server.ServingOptions) {
	o.RequestTimeout = apiserver.DefaultRequestTimeout
	fs.DurationVar(&o.RequestTimeout, "request-timeout", o.RequestTimeout,
		"the longest a request that is not long-running (watches, pod streams) may take; a request may ask for less with ?timeout=")
	o.MinRequestTimeout = apiserver.DefaultMinRequestTimeout
	fs.Var((*seconds)(&o.MinRequestTimeout), "min-request-timeout",
		"seconds a watch without timeoutSeconds runs at least; each such watch ends at random between this and twice this")
	fs.IntVar(&o.HTTP2MaxStreamsPerConnection, "http2-max-streams-per-connection", 0,
		"the most concurrent HTTP/2 streams a client may open on one connection; 0 means 100")
	fs.Float64Var(&o.GoawayChance, "goaway-chance", 0,
		"the probability (0 to 0.02) that an HTTP/2 request's answer closes its connection, so that clients reconnect, through a load balancer, to other servers")
	fs.Var(negatedBool{&o.DisableProfiling}, "profiling",
		"serve Go's profiles at /debug/pprof/ (to cluster administrators, as RBAC allows nobody else)")
	fs.Var(negatedBool{&o.DisablePriorityAndFairness}, "enable-priority-and-fairness",
		"classify every request by FlowSchema into a priority level and queue it fairly for the level's seats (API Priority and Fairness); false uses the plain in-flight limits")
	fs.Var(inflightFlag{&o.MaxRequestsInflight, 400}, "max-requests-inflight",
		"with --max-mutating-requests-inflight, the seats API Priority and Fairness shares out; without it, the most read-only requests served at once (0: no limit)")
	fs.Var(inflightFlag{&o.MaxMutatingRequestsInflight, 200}, "max-mutating-requests-inflight",
		"with --max-requests-inflight, the seats API Priority and Fairness shares out; without it, the most mutating requests served at once (0: no limit)")
	fs.DurationVar(&o.ShutdownDelayDuration, "shutdown-delay-duration", 0,
		"on SIGTERM, how long to keep serving after /readyz starts failing, for load balancers to notice")
	fs.DurationVar(&o.ShutdownWatchTerminationGracePeriod, "shutdown-watch-termination-grace-period", 0,
		"on SIGTERM, how long watches may go on after the listener closes before they are ended (0: ended at once)")
}

// checkServingFlags refuses values kube-apiserver refuses.
func checkServingFlags(o server.ServingOptions) error {
	if o.RequestTimeout <= 0 {
		return fmt.Errorf("--request-timeout must be positive, got %v", o.RequestTimeout)
	}
	if o.MinRequestTimeout <= 0 {
		return fmt.Errorf("--min-request-timeout must be a positive number of seconds, got %d", int64(o.MinRequestTimeout/time.Second))
	}
	if o.ShutdownDelayDuration < 0 || o.ShutdownWatchTerminationGracePeriod < 0 {
		return fmt.Errorf("--shutdown-delay-duration and --shutdown-watch-termination-grace-period must not be negative")
	}
	if o.GoawayChance < 0 || o.GoawayChance > 0.02 {
		return fmt.Errorf("--goaway-chance can not be less than 0 or greater than 0.02")
	}
	if o.HTTP2MaxStreamsPerConnection < 0 {
		return fmt.Errorf("--http2-max-streams-per-connection must not be negative, got %d", o.HTTP2MaxStreamsPerConnection)
	}
	return nil
}

// negatedBool is a flag whose value is the opposite of the field it sets
// (the option's zero value is the flag's default, true).
type negatedBool struct{ v *bool }

func (b negatedBool) String() string {
	if b.v == nil {
		return "true"
	}
	return strconv.FormatBool(!*b.v)
}

func (b negatedBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*b.v = !v
	return nil
}

func (b negatedBool) Type() string     { return "bool" }
func (b negatedBool) IsBoolFlag() bool { return true }

// inflightFlag is an in-flight limit: the option's 0 is upstream's default
// and a negative value is the flag's 0 (no limit).
type inflightFlag struct {
	v   *int
	def int
}

func (f inflightFlag) String() string {
	switch {
	case f.v == nil || *f.v == 0:
		return strconv.Itoa(f.def)
	case *f.v < 0:
		return "0"
	}
	return strconv.Itoa(*f.v)
}

func (f inflightFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("must be a non-negative integer, got %q", s)
	}
	if n == 0 {
		n = -1
	}
	*f.v = n
	return nil
}

func (f inflightFlag) Type() string { return "int" }

// seconds is a duration written as a whole number of seconds, as
// kube-apiserver's --min-request-timeout.
type seconds time.Duration

func (s *seconds) String() string { return fmt.Sprint(int64(time.Duration(*s) / time.Second)) }

func (s *seconds) Set(v string) error {
	var n int64
	if _, err := fmt.Sscan(v, &n); err != nil || fmt.Sprint(n) != v {
		return fmt.Errorf("must be a whole number of seconds, got %q", v)
	}
	if n > int64(time.Duration(1<<63-1)/time.Second) {
		return fmt.Errorf("%q seconds is too long", v)
	}
	*s = seconds(time.Duration(n) * time.Second)
	return nil
}

func (s *seconds) Type() string { return "int" }
