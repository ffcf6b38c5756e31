package server

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/auth/node"
	"github.com/admitd/admitd/internal/auth/rbac"
)

// privilegedGroupName is the name kube-apiserver gives the system:masters
// authorizer it puts in front of the configured ones.
const privilegedGroupName = "kubernetes.io/system-privileged-group"

// modeAuthorizers are the authorizers of the modes that read the cluster's
// state; node is nil when the Node mode is off.
type modeAuthorizers struct {
	rbac *rbac.Authorizer
	node *node.Authorizer
}

// newAuthorizer is the server's authorizer chain: system:masters allowed,
// then the --authorization-mode authorizers in order, each metered as
// upstream's apiserver_authorization_decisions_total. The modes must have
// passed auth.ValidateModes.
func newAuthorizer(modes []string, by modeAuthorizers, reg prometheus.Registerer) auth.Authorizer {
	metrics := auth.NewDecisionMetrics(reg)
	union := auth.AuthorizerUnion{{Name: privilegedGroupName, Authorizer: auth.PrivilegedGroups("system:masters")}}
	for _, mode := range modes {
		n := auth.Named{Type: mode, Name: strings.ToLower(mode)}
		switch mode {
		case auth.ModeAlwaysAllow:
			n.Authorizer = auth.AlwaysAllow
		case auth.ModeAlwaysDeny:
			n.Authorizer = auth.AlwaysDeny
		case auth.ModeRBAC:
			n.Authorizer = by.rbac
		case auth.ModeNode:
			n.Authorizer = by.node
		default:
			continue // refused by ValidateModes
		}
		union = append(union, metrics.Instrument(n))
	}
	return union
}
