// Package alwaysdeny is the deprecated AlwaysDeny admission plugin: it
// refuses every request it sees, in both phases, with upstream's 403.
//
// Upstream logs "AlwaysDeny admission controller is deprecated. Please
// remove this controller from your configuration files and scripts." when
// the plugin is built; a plugin factory here gets no logger, so admitd does
// not repeat that warning.
package alwaysdeny

import (
	"context"
	"errors"

	"github.com/admitd/admitd/pkg/admission"
)

// Name is the upstream plugin name.
const Name = "AlwaysDeny"

// errDenied is the reason of every refusal.
var errDenied = errors.New("admission control is denying all modifications")

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(admission.PluginContext) (admission.Handler, error) { return Plugin{}, nil })
}

// Plugin is the AlwaysDeny plugin.
type Plugin struct{}

var (
	_ admission.Mutator   = Plugin{}
	_ admission.Validator = Plugin{}
)

// Handles every operation.
func (Plugin) Handles(admission.Operation) bool { return true }

// Admit refuses.
func (Plugin) Admit(_ context.Context, a *admission.Attributes) error {
	return admission.NewForbidden(a, errDenied)
}

// Validate refuses.
func (Plugin) Validate(_ context.Context, a *admission.Attributes) error {
	return admission.NewForbidden(a, errDenied)
}
