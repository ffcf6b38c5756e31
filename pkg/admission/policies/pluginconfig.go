package policies

import (
	"fmt"
	"io"

	"github.com/admitd/admitd/pkg/admission/internal/manifest"
)

// loadPluginConfig decodes the plugin's configuration
// (apiserver.config.k8s.io/v1 ValidatingAdmissionPolicyConfiguration or
// MutatingAdmissionPolicyConfiguration, named by kind); nil input is the
// empty configuration.
func loadPluginConfig(r io.Reader, kind string) (manifest.PluginConfig, error) {
	cfg, err := manifest.ParsePluginConfig(r)
	if err != nil || r == nil {
		return cfg, err
	}
	switch {
	case cfg.Kind != kind:
		return cfg, fmt.Errorf("unexpected type: %s", cfg.Kind)
	case cfg.KubeConfigFile != "":
		return cfg, fmt.Errorf(`unknown field "kubeConfigFile"`)
	}
	return cfg, nil
}
