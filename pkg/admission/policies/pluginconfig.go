package policies

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// pluginConfig is apiserver.config.k8s.io/v1
// ValidatingAdmissionPolicyConfiguration or
// MutatingAdmissionPolicyConfiguration: the plugin's section of the
// AdmissionConfiguration.
type pluginConfig struct {
	APIVersion         string `json:"apiVersion"`
	Kind               string `json:"kind"`
	StaticManifestsDir string `json:"staticManifestsDir,omitempty"`
}

// loadPluginConfig decodes a plugin configuration strictly; nil input is
// the empty configuration.
func loadPluginConfig(r io.Reader, kind string) (pluginConfig, error) {
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
	case cfg.Kind != kind:
		return cfg, fmt.Errorf("unexpected type: %s", cfg.Kind)
	}
	return cfg, checkManifestsDir(cfg.StaticManifestsDir)
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
