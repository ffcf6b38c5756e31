package webhooks

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// pluginConfig is apiserver.config.k8s.io/v1 WebhookAdmissionConfiguration,
// the configuration of either webhook plugin.
type pluginConfig struct {
	APIVersion         string `json:"apiVersion"`
	Kind               string `json:"kind"`
	KubeConfigFile     string `json:"kubeConfigFile,omitempty"`
	StaticManifestsDir string `json:"staticManifestsDir,omitempty"`
}

// loadPluginConfig decodes a plugin configuration strictly; nil input is
// the empty configuration.
func loadPluginConfig(r io.Reader) (pluginConfig, error) {
	var cfg pluginConfig
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
	strict, err := sigsjson.UnmarshalStrict(j, &cfg, sigsjson.DisallowUnknownFields)
	if err != nil {
		return cfg, err
	}
	if len(strict) > 0 {
		return cfg, errors.Join(strict...)
	}
	switch {
	case cfg.Kind == "":
		return cfg, fmt.Errorf("'Kind' is missing in '%s'", data)
	case cfg.Kind != "WebhookAdmissionConfiguration" && cfg.Kind != "WebhookAdmission":
		return cfg, fmt.Errorf("no kind %q is registered for version %q", cfg.Kind, cfg.APIVersion)
	}
	if cfg.KubeConfigFile != "" && !filepath.IsAbs(cfg.KubeConfigFile) {
		return cfg, fmt.Errorf("kubeConfigFile: Invalid value: %q: must be an absolute file path", cfg.KubeConfigFile)
	}
	if err := checkManifestsDir(cfg.StaticManifestsDir); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func checkManifestsDir(dir string) error {
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
