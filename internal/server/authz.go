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

// webhookModeName is the name kube-apiserver gives the authorizer of
// --authorization-mode=Webhook.
const webhookModeName = "default"

// modeAuthorizers are the authorizers of the modes that read the cluster's
// state or call out; node is nil when the Node mode is off, webhook when
// the Webhook mode is.
type modeAuthorizers struct {
	rbac    *rbac.Authorizer
	node    *node.Authorizer
	webhook auth.Authorizer
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
		case auth.ModeWebhook:
			n.Name = webhookModeName
			n.Authorizer = by.webhook
		default:
			continue // refused by ValidateModes
		}
		union = append(union, metrics.Instrument(n))
	}
	return union
}
