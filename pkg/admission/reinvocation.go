package admission

// reinvocationState is the chain-level reinvocation context of one request:
// whether the mutating chain is in its second pass, whether a plugin asked
// for that pass, and per-plugin state that survives between passes.
type reinvocationState struct {
	reinvoking bool
	requested  bool
	values     map[string]any
}

// IsReinvoke reports whether the mutating chain is running its second pass.
func (r *Record) IsReinvoke() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reinvoke.reinvoking
}

// RequestReinvocation asks the chain for a second mutating pass. Only plugins
// that detect their own mutations (webhooks, mutating policies) call it.
func (r *Record) RequestReinvocation() {
	r.mu.Lock()
	r.reinvoke.requested = true
	r.mu.Unlock()
}

// PluginState returns the reinvocation state a plugin stored under key.
func (r *Record) PluginState(key string) any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reinvoke.values[key]
}

// SetPluginState stores reinvocation state for a plugin under key.
func (r *Record) SetPluginState(key string, v any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reinvoke.values == nil {
		r.reinvoke.values = map[string]any{}
	}
	r.reinvoke.values[key] = v
}

// ReleasePluginState forgets what plugins kept on the record for the
// request (a mutating webhook's or policy's copy of the object it last
// saw, the namespace read for it). A keeper of finished records, such as a
// ring of traces, calls it: it needs none of it, and it can be as large as
// the object.
func (r *Record) ReleasePluginState() {
	r.mu.Lock()
	r.reinvoke.values = nil
	r.mu.Unlock()
}

// startReinvocation switches to the second pass if one was requested and
// reports whether it did.
func (r *Record) startReinvocation() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.reinvoke.requested || r.reinvoke.reinvoking {
		return false
	}
	r.reinvoke.reinvoking = true
	return true
}
