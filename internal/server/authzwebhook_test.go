package server

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestAuthorizationWebhookValidate(t *testing.T) {
	for _, tc := range []struct {
		modes      []string
		configFile string
		want       string
	}{
		{[]string{"Node", "RBAC"}, "", ""},
		{[]string{"RBAC", "Webhook"}, "/etc/authz.kubeconfig", ""},
		{[]string{"RBAC", "Webhook"}, "", "authorization-mode Webhook's authorization config file not passed"},
		{[]string{"RBAC"}, "/etc/authz.kubeconfig", "cannot specify --authorization-webhook-config-file without mode Webhook"},
	} {
		o := DefaultAuthorizationWebhookOptions()
		o.ConfigFile = tc.configFile
		got := ""
		if err := o.validate(tc.modes); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("validate(%q, %q) = %q, want %q", tc.modes, tc.configFile, got, tc.want)
		}
	}
}

func TestAuthorizationWebhookOff(t *testing.T) {
	a, err := DefaultAuthorizationWebhookOptions().authorizer([]string{"RBAC"}, prometheus.NewRegistry())
	if a != nil || err != nil {
		t.Errorf("authorizer without the Webhook mode = %v, %v; want nil, nil", a, err)
	}
}
