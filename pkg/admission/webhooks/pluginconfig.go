package webhooks

import (
	"fmt"
	"io"

	"github.com/admitd/admitd/pkg/admission/internal/manifest"
)

// loadPluginConfig decodes the webhook plugins' configuration
// (apiserver.config.k8s.io/v1 WebhookAdmissionConfiguration); nil input is
// the empty configuration.
func loadPluginConfig(r io.Reader) (manifest.PluginConfig, error) {
	cfg, err := manifest.ParsePluginConfig(r)
	if err != nil || r == nil {
		return cfg, err
	}
	if cfg.Kind != "WebhookAdmissionConfiguration" && cfg.Kind != "WebhookAdmission" {
		return cfg, fmt.Errorf("no kind %q is registered for version %q", cfg.Kind, cfg.APIVersion)
	}
	return cfg, nil
}
