// Package alwaysadmit is the deprecated AlwaysAdmit admission plugin: it
// admits every request in both phases and changes nothing.
//
// Upstream logs "AlwaysAdmit admission controller is deprecated. Please
// remove this controller from your configuration files and scripts." when
// the plugin is built; a plugin factory here gets no logger, so admitd does
// not repeat that warning. The plugin is not a way to turn admission off:
// the other enabled plugins still run.
package alwaysadmit

import (
	"context"

	"github.com/admitd/admitd/pkg/admission"
)

// Name is the upstream plugin name.
const Name = "AlwaysAdmit"

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(admission.PluginContext) (admission.Handler, error) { return Plugin{}, nil })
}

// Plugin is the AlwaysAdmit plugin.
type Plugin struct{}

var (
	_ admission.Mutator   = Plugin{}
	_ admission.Validator = Plugin{}
)

// Handles every operation.
func (Plugin) Handles(admission.Operation) bool { return true }

// Admit admits.
func (Plugin) Admit(context.Context, *admission.Attributes) error { return nil }

// Validate admits.
func (Plugin) Validate(context.Context, *admission.Attributes) error { return nil }
