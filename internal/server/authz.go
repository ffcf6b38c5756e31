package server

import (
	"context"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/auth/authzconfig"
	"github.com/admitd/admitd/internal/auth/node"
	"github.com/admitd/admitd/internal/auth/rbac"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
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
	union := privilegedFirst()
	for _, mode := range modes {
		n := auth.Named{Type: mode, Name: strings.ToLower(mode)}
		if mode == auth.ModeWebhook {
			n.Name, n.Authorizer = webhookModeName, by.webhook
		} else if a, ok := by.builtin(mode); ok {
			n.Authorizer = a
		} else {
			continue // refused by ValidateModes
		}
		union = append(union, metrics.Instrument(n))
	}
	return union
}

// privilegedFirst is the start of every chain: system:masters is allowed
// before any authorizer is asked, as upstream.
func privilegedFirst() auth.AuthorizerUnion {
	return auth.AuthorizerUnion{{Name: privilegedGroupName, Authorizer: auth.PrivilegedGroups("system:masters")}}
}

// builtin is the authorizer of a mode that needs no configuration of its
// own (every mode but Webhook).
func (by modeAuthorizers) builtin(mode string) (auth.Authorizer, bool) {
	switch mode {
	case auth.ModeAlwaysAllow:
		return auth.AlwaysAllow, true
	case auth.ModeAlwaysDeny:
		return auth.AlwaysDeny, true
	case auth.ModeRBAC:
		return by.rbac, true
	case auth.ModeNode:
		return by.node, true
	}
	return nil, false
}

// validateAuthorization checks the authorization options before anything
// starts: the file of --authorization-config, else the modes and their
// webhook flags.
func validateAuthorization(o Options) error {
	if o.AuthorizationConfigFile != "" {
		_, err := authzconfig.Load(o.AuthorizationConfigFile)
		return err
	}
	if err := auth.ValidateModes(o.AuthorizationModes); err != nil {
		return err
	}
	return o.AuthorizationWebhook.validate(o.AuthorizationModes)
}

// newServerAuthorizer is the chain of --authorization-config (reloaded
// until ctx ends) or of --authorization-mode, and the node graph it reads
// (nil when the Node mode is off; always built with a configuration file,
// which may name Node when reloaded).
func newServerAuthorizer(ctx context.Context, o Options, store storage.Store, cat *registry.Catalogue,
	policy *rbacPolicy, reg prometheus.Registerer) (auth.Authorizer, *nodeGraph, error) {
	modes := o.AuthorizationModes
	if o.AuthorizationConfigFile != "" {
		modes = []string{auth.ModeNode}
	}
	nodes, err := newNodeGraph(modes, store, cat, reg, o.Logger)
	if err != nil {
		return nil, nil, err
	}
	by := modeAuthorizers{rbac: policy.authorizer, node: nodes.nodeAuthorizer()}
	if o.AuthorizationConfigFile != "" {
		c, err := newConfiguredAuthorizer(o.AuthorizationConfigFile, by, reg, o.Logger)
		if err != nil {
			return nil, nil, err
		}
		return c, nodes, c.watch(ctx)
	}
	if by.webhook, err = o.AuthorizationWebhook.authorizer(modes, reg); err != nil {
		return nil, nil, err
	}
	return newAuthorizer(modes, by, reg), nodes, nil
}
