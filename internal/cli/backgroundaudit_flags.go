package cli

import (
	"github.com/spf13/pflag"

	"github.com/admitd/admitd/internal/backgroundaudit"
	"github.com/admitd/admitd/internal/server"
)

// addBackgroundAuditFlags registers --background-audit and its interval
// and pause (admitd's own; kube-apiserver has no background audit).
func addBackgroundAuditFlags(fs *pflag.FlagSet, o *server.BackgroundAuditOptions) {
	fs.BoolVar(&o.Enabled, "background-audit", false,
		"evaluate the validations of ValidatingAdmissionPolicies whose bindings include the Audit action against the stored objects, in the background "+
			"(each object as the UPDATE that re-applies it; nothing is written to it); results on the dashboard's compliance view, and as wgpolicyk8s.io/v1alpha2 PolicyReports when that CRD is installed")
	fs.DurationVar(&o.Interval, "background-audit-interval", backgroundaudit.DefaultInterval,
		"the longest time between two background audits; a change of a policy, binding or param starts one at once")
	fs.DurationVar(&o.Pause, "background-audit-pause", backgroundaudit.DefaultPause,
		"time waited after each object the background audit evaluates, the bound on its CPU (0: the default; negative: none)")
}
