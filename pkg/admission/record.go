package admission

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// AuditLevel orders how much of a request an audit event records; admission
// annotations carry the lowest level at which they are recorded.
type AuditLevel int

// Audit levels, in increasing order of detail (audit.k8s.io/v1 names).
const (
	LevelNone AuditLevel = iota
	LevelMetadata
	LevelRequest
	LevelRequestResponse
)

// Annotation is one audit annotation added during admission.
type Annotation struct {
	Key, Value string
	Level      AuditLevel
}

// Step is one entry of the admission trace: a plugin, webhook or policy that
// was considered for the request.
type Step struct {
	Plugin   string        // plugin name, e.g. MutatingAdmissionWebhook
	Name     string        // webhook or policy name, empty for a plain plugin
	Config   string        // configuration or binding name
	Round    int           // 0 for the first pass, 1 for reinvocation
	Matched  bool          // whether it applied to the request
	Reason   string        // why it was skipped, or what it decided
	Mutated  bool          // whether it changed the object
	Duration time.Duration // time spent
	Err      string        // error text, if it failed
	// Skip names the check that excluded a step that did not match (one of
	// the Skip* constants), empty otherwise.
	Skip string
	// Detail is what a trace shows beyond the summary; nil for a plain
	// plugin step. It is filled when the step is recorded and rendered only
	// when a trace is read.
	Detail *StepDetail
}

// Record is the per-request log of admission: audit annotations, warnings
// for the client, and the trace. It is safe for concurrent use (validating
// webhooks run in parallel).
type Record struct {
	mu          sync.Mutex
	annotations []Annotation
	warnings    []string
	// order is the trace in order: compiled-in plugin steps in compact
	// form, and references into steps for the others.
	order     []stepRef
	steps     []Step
	stepsRoom int // the room the first step makes, when reserved
	reinvoke  reinvocationState
	trace     traceState
	webhooks  webhookTime
}

// NewRecord returns an empty Record.
func NewRecord() *Record { return &Record{} }

// AddAnnotation records an audit annotation at level Metadata.
func (r *Record) AddAnnotation(key, value string) error {
	return r.AddAnnotationWithLevel(key, value, LevelMetadata)
}

// AddAnnotationWithLevel records an audit annotation. The key must be a
// qualified name with a DNS-subdomain prefix; the first value written for a
// key wins and a different later value is an error.
func (r *Record) AddAnnotationWithLevel(key, value string, level AuditLevel) error {
	if err := checkAnnotationKey(key); err != nil {
		return err
	}
	if level < LevelMetadata {
		return fmt.Errorf("admission annotations are not allowed to be set at audit level lower than Metadata, key: %q, level: %v", key, level)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.annotations {
		if a.Key != key {
			continue
		}
		if a.Value == value && a.Level == level {
			return nil
		}
		return fmt.Errorf("admission annotations are not allowd to be overwritten, key:%q, old value: %q, new value: %q", key, a.Value, value)
	}
	r.annotations = append(r.annotations, Annotation{Key: key, Value: value, Level: level})
	return nil
}

// validAnnotationKeys remembers keys that passed checkAnnotationKey (a
// regular expression): the same few keys, per webhook, round and policy,
// come with every request. At most maxValidAnnotationKeys are kept.
var (
	validAnnotationKeys    sync.Map // key → struct{}
	validAnnotationKeysLen atomic.Int32
)

const maxValidAnnotationKeys = 4096

func checkAnnotationKey(key string) error {
	if _, ok := validAnnotationKeys.Load(key); ok {
		return nil
	}
	if err := validateAnnotationKey(key); err != nil {
		return err
	}
	if validAnnotationKeysLen.Load() < maxValidAnnotationKeys {
		if _, loaded := validAnnotationKeys.LoadOrStore(key, struct{}{}); !loaded {
			validAnnotationKeysLen.Add(1)
		}
	}
	return nil
}

func validateAnnotationKey(key string) error {
	if len(strings.Split(key, "/")) != 2 {
		return fmt.Errorf("annotation key has invalid format, the right format is a DNS subdomain prefix and '/' and key name. (e.g. 'podsecuritypolicy.admission.k8s.io/admit-policy')")
	}
	if msgs := validation.IsQualifiedName(key); len(msgs) != 0 {
		return fmt.Errorf("annotation key has invalid format %s. A qualified name like 'podsecuritypolicy.admission.k8s.io/admit-policy' is required.", strings.Join(msgs, ","))
	}
	return nil
}

// Annotations returns the annotations whose level is at most level, in the
// order they were added.
func (r *Record) Annotations(level AuditLevel) []Annotation {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Annotation, 0, len(r.annotations))
	for _, a := range r.annotations {
		if a.Level <= level {
			out = append(out, a)
		}
	}
	return out
}

// AddWarning records a warning for the client (a Warning response header).
func (r *Record) AddWarning(text string) {
	r.mu.Lock()
	r.warnings = append(r.warnings, text)
	r.mu.Unlock()
}

// Warnings returns the warnings in the order they were added.
func (r *Record) Warnings() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.warnings...)
}

// initialSteps is the room a trace starts with when nothing reserved any:
// a step per phase of the default plugins, grown once at most.
const initialSteps = 32

// fullStepsRoom is the room for steps kept whole (webhooks, policies,
// plugin errors) when the first one is recorded.
const fullStepsRoom = 4

// AddStep appends one trace step.
func (r *Record) AddStep(s Step) {
	r.mu.Lock()
	if r.steps == nil {
		r.steps = make([]Step, 0, fullStepsRoom)
	}
	r.steps = append(r.steps, s)
	r.appendRefLocked(wholeStepRef(len(r.steps) - 1))
	r.mu.Unlock()
}

// appendPluginSteps appends plugin steps to the trace, in order.
func (r *Record) appendPluginSteps(refs []stepRef) {
	r.mu.Lock()
	for _, ref := range refs {
		r.appendRefLocked(ref)
	}
	r.mu.Unlock()
}

// pendingSteps gathers the steps of the compiled-in plugins a chain runs one
// after another, so that the record is locked once for a run of them rather
// than once per plugin. The chain flushes it before anything else records a
// step (a plugin recording its own, a step kept whole) and at the end of
// the pass, so the trace keeps its order.
type pendingSteps struct {
	refs [16]stepRef
	n    int
}

// add holds ref for r, flushing when full.
func (p *pendingSteps) add(r *Record, ref stepRef) {
	if p.n == len(p.refs) {
		p.flush(r)
	}
	p.refs[p.n] = ref
	p.n++
}

// flush appends the held steps to r.
func (p *pendingSteps) flush(r *Record) {
	if p.n > 0 && r != nil {
		r.appendPluginSteps(p.refs[:p.n])
	}
	p.n = 0
}

// appendRefLocked appends to the trace order, making the reserved room
// first; r.mu is held.
func (r *Record) appendRefLocked(ref stepRef) {
	if r.order == nil {
		n := r.stepsRoom
		if n <= 0 {
			n = initialSteps
		}
		r.order = make([]stepRef, 0, n)
	}
	r.order = append(r.order, ref)
}

// reserveStepsLocked says how much room the first step makes: the chain
// knows how many steps its plugins leave on a request. Nothing is allocated
// until a step is recorded. r.mu is held.
func (r *Record) reserveStepsLocked(n int) {
	if r.order == nil {
		r.stepsRoom = n
	}
}

// HasSteps reports whether any step was recorded.
func (r *Record) HasSteps() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.order) > 0
}

// Steps returns a copy of the trace.
func (r *Record) Steps() []Step {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.order) == 0 {
		return nil
	}
	out := make([]Step, len(r.order))
	for i, ref := range r.order {
		out[i] = ref.step(r.steps)
	}
	return out
}

// AppendSteps appends the trace to dst and returns it: Steps into a
// buffer the caller reuses.
func (r *Record) AppendSteps(dst []Step) []Step {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ref := range r.order {
		dst = append(dst, ref.step(r.steps))
	}
	return dst
}
