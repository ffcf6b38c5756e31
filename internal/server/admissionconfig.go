package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// admissionConfiguration is apiserver.config.k8s.io/v1 AdmissionConfiguration
// (--admission-control-config-file).
type admissionConfiguration struct {
	APIVersion string                  `json:"apiVersion"`
	Kind       string                  `json:"kind"`
	Plugins    []admissionPluginConfig `json:"plugins"`
}

type admissionPluginConfig struct {
	Name          string          `json:"name"`
	Path          string          `json:"path,omitempty"`
	Configuration json.RawMessage `json:"configuration,omitempty"`
}

// pluginConfigs holds each plugin's configuration document.
type pluginConfigs map[string][]byte

// configFor returns the configuration of a plugin, or nil.
func (p pluginConfigs) configFor(name string) io.Reader {
	if data, ok := p[name]; ok {
		return bytes.NewReader(data)
	}
	return nil
}

// loadAdmissionConfig reads an AdmissionConfiguration strictly. For each
// plugin the first entry wins; inline configuration wins over path, and a
// relative path is resolved against the file's directory.
func loadAdmissionConfig(path string) (pluginConfigs, error) {
	out := pluginConfigs{}
	if path == "" {
		return out, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("unable to read admission control configuration from %q [%v]", path, err)
	}
	if legacy := legacyAdmissionConfig(data); legacy != nil {
		return legacy, nil
	}
	// Strictly, as upstream's strict codec reads it: a repeated key is an error.
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("unable to read admission control configuration from %q [strict decoding error: %v]", path, err)
	}
	var cfg admissionConfiguration
	strict, err := sigsjson.UnmarshalStrict(j, &cfg, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err == nil && len(strict) > 0 {
		err = strict[0]
	}
	if err != nil {
		return nil, fmt.Errorf("unable to read admission control configuration from %q [%v]", path, err)
	}
	if cfg.Kind != "AdmissionConfiguration" || (cfg.APIVersion != "apiserver.config.k8s.io/v1" && cfg.APIVersion != "apiserver.k8s.io/v1alpha1") {
		return nil, fmt.Errorf("unable to read admission control configuration from %q [unexpected %s %s]", path, cfg.APIVersion, cfg.Kind)
	}
	for _, p := range cfg.Plugins {
		if _, seen := out[p.Name]; seen {
			continue
		}
		switch {
		case len(p.Configuration) > 0:
			out[p.Name] = p.Configuration
		case p.Path != "":
			pp := p.Path
			if !filepath.IsAbs(pp) {
				pp = filepath.Join(filepath.Dir(path), pp)
			}
			b, err := os.ReadFile(pp)
			if err != nil {
				return nil, fmt.Errorf("failed to read plugin config: unable to read admission control configuration from %q [%v]", pp, err)
			}
			out[p.Name] = b
		}
	}
	return out, nil
}

// legacyAdmissionConfig is upstream's fallback for the files that predate
// AdmissionConfiguration: a file without apiVersion or kind (or of a kind
// that is not an AdmissionConfiguration) whose top level has
// podNodeSelectorPluginConfig or imagePolicy is, whole, the configuration
// of PodNodeSelector and ImagePolicyWebhook. It returns nil for any other
// file.
func legacyAdmissionConfig(data []byte) pluginConfigs {
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if j, err := yaml.YAMLToJSON(data); err != nil || json.Unmarshal(j, &tm) != nil {
		return nil
	}
	if tm.Kind == "AdmissionConfiguration" && (tm.APIVersion == "apiserver.config.k8s.io/v1" || tm.APIVersion == "apiserver.k8s.io/v1alpha1") {
		return nil
	}
	var top map[string]any
	if yaml.Unmarshal(data, &top) != nil {
		return nil
	}
	_, imagePolicy := top["imagePolicy"]
	_, nodeSelector := top["podNodeSelectorPluginConfig"]
	if !imagePolicy && !nodeSelector {
		return nil
	}
	return pluginConfigs{"ImagePolicyWebhook": data, "PodNodeSelector": data}
}
