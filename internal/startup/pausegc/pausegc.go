// Package pausegc pauses the garbage collector (startup.PauseGC) when the
// binary that imports it starts, unless GOGC is set. Import it for its
// side effect from a main package only; the command resumes collection
// once it has started (startup.Resume).
//
// Its initialization runs early: Go initializes packages in the order of
// their import paths, each once its own imports are, and this one imports
// only what the runtime's own packages do; the heavy initialization of
// k8s.io's packages comes after it.
package pausegc

import (
	"os"

	"github.com/admitd/admitd/internal/startup"
)

func init() {
	if _, set := os.LookupEnv("GOGC"); !set {
		startup.PauseGC()
	}
}
