package auth

import (
	"fmt"
	"slices"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// The values of --authorization-mode, as kube-apiserver's.
const (
	ModeAlwaysAllow = "AlwaysAllow"
	ModeAlwaysDeny  = "AlwaysDeny"
	ModeABAC        = "ABAC"
	ModeWebhook     = "Webhook"
	ModeRBAC        = "RBAC"
	ModeNode        = "Node"
)

// modes are the modes kube-apiserver knows.
var modes = []string{ModeAlwaysAllow, ModeAlwaysDeny, ModeABAC, ModeWebhook, ModeRBAC, ModeNode}

// notImplemented are modes kube-apiserver knows and admitd does not serve
// yet: refused at start rather than silently having no opinion.
var notImplemented = []string{ModeABAC}

// ValidateModes checks an --authorization-mode list with kube-apiserver's
// messages (several errors read "[a, b]", as upstream's aggregate), then
// refuses the modes admitd does not implement.
func ValidateModes(list []string) error {
	var errs []error
	if len(list) == 0 {
		errs = append(errs, fmt.Errorf("at least one authorization-mode must be passed"))
	}
	seen := map[string]bool{}
	for _, m := range list {
		if !slices.Contains(modes, m) {
			errs = append(errs, fmt.Errorf("authorization-mode %q is not a valid mode", m))
		}
		seen[m] = true
	}
	if len(seen) != len(list) {
		errs = append(errs, fmt.Errorf("authorization-mode %q has mode specified more than once", list))
	}
	if len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}
	for _, m := range list {
		if slices.Contains(notImplemented, m) {
			return fmt.Errorf("authorization-mode %s is not implemented by admitd yet (available: %s, %s, %s, %s, %s)",
				m, ModeAlwaysAllow, ModeAlwaysDeny, ModeNode, ModeRBAC, ModeWebhook)
		}
	}
	return nil
}
