package manifest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// PluginConfig is a plugin's section of the AdmissionConfiguration:
// apiserver.config.k8s.io/v1 WebhookAdmissionConfiguration,
// ValidatingAdmissionPolicyConfiguration or
// MutatingAdmissionPolicyConfiguration.
type PluginConfig struct {
	APIVersion         string `json:"apiVersion"`
	Kind               string `json:"kind"`
	KubeConfigFile     string `json:"kubeConfigFile,omitempty"`
	StaticManifestsDir string `json:"staticManifestsDir,omitempty"`
}

// ErrNoKind is returned for a configuration document without a kind.
var ErrNoKind = errors.New("'Kind' is missing")

// ParsePluginConfig decodes a plugin configuration strictly and checks its
// paths; nil input is the empty configuration. The caller checks Kind.
func ParsePluginConfig(r io.Reader) (PluginConfig, error) {
	var cfg PluginConfig
	if r == nil {
		return cfg, nil
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return cfg, err
	}
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return cfg, err
	}
	if err := DecodeStrict(j, &cfg); err != nil {
		return cfg, err
	}
	if cfg.Kind == "" {
		return cfg, fmt.Errorf("%w in '%s'", ErrNoKind, data)
	}
	if cfg.KubeConfigFile != "" && !filepath.IsAbs(cfg.KubeConfigFile) {
		return cfg, fmt.Errorf("kubeConfigFile: Invalid value: %q: must be an absolute file path", cfg.KubeConfigFile)
	}
	return cfg, checkDir(cfg.StaticManifestsDir)
}

func checkDir(dir string) error {
	if dir == "" {
		return nil
	}
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("staticManifestsDir: Invalid value: %q: must be an absolute file path", dir)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("staticManifestsDir: Invalid value: %q: unable to read: %v", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("staticManifestsDir: Invalid value: %q: must be a directory", dir)
	}
	return nil
}
