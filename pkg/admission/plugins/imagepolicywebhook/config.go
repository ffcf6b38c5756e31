package imagepolicywebhook

import (
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// Configuration is the plugin's configuration: the imagePolicy section of
// its configuration file, every duration normalized (defaults applied,
// units scaled, -1 turned into 0).
type Configuration struct {
	// KubeConfigFile is the kubeconfig file naming the backend: its current
	// context's cluster (server URL, CA) and user (client certificate and
	// key, or token).
	KubeConfigFile string
	// AllowTTL is how long an answer that allows is cached; written in
	// seconds, 0 meaning the default of 5m and -1 not caching. 1s to 30m.
	AllowTTL time.Duration
	// DenyTTL is how long an answer that denies is cached; written in
	// seconds, 0 meaning the default of 30s and -1 not caching. 1s to 30m.
	DenyTTL time.Duration
	// RetryBackoff is the first wait between two attempts at a failing
	// backend; written in milliseconds, 0 meaning the default of 500ms and
	// -1 no wait. 1ms to 5m.
	RetryBackoff time.Duration
	// DefaultAllow admits pods when the backend cannot be reached or
	// answers an error (fail open); false refuses them.
	DefaultAllow bool
}

// fileConfig is the file as written: durations are plain numbers, read as
// nanoseconds and scaled afterwards. The type names are upstream's, so
// that a malformed number is reported in the same words.
type fileConfig struct {
	ImagePolicyWebhook imagePolicyWebhookConfig `json:"imagePolicy"`
}

type imagePolicyWebhookConfig struct {
	KubeConfigFile string        `json:"kubeConfigFile"`
	AllowTTL       time.Duration `json:"allowTTL"`
	DenyTTL        time.Duration `json:"denyTTL"`
	RetryBackoff   time.Duration `json:"retryBackoff"`
	DefaultAllow   bool          `json:"defaultAllow"`
}

// durationRule is how one duration of the file is read.
type durationRule struct {
	name     string
	unit     time.Duration // what one written unit is worth
	min, max time.Duration
	def      time.Duration // meant by 0
}

var (
	retryBackoffRule = durationRule{"backoff", time.Millisecond, 1, 5 * time.Minute, 500 * time.Millisecond}
	allowTTLRule     = durationRule{"allow cache", time.Second, time.Second, 30 * time.Minute, 5 * time.Minute}
	denyTTLRule      = durationRule{"deny cache", time.Second, time.Second, 30 * time.Minute, 30 * time.Second}
)

// normalize reads v, written in r.unit: -1 is 0 (disabled), 0 is the
// default, anything else is scaled and must be within [min, max].
func (r durationRule) normalize(v time.Duration) (time.Duration, error) {
	switch v {
	case -1:
		return 0, nil
	case 0:
		return r.def, nil
	}
	v *= r.unit
	if v < r.min || v > r.max {
		return v, fmt.Errorf("valid value is between %v and %v, got %v", r.min, r.max, v)
	}
	return v, nil
}

// LoadConfiguration reads the plugin's configuration (YAML or JSON, the
// imagePolicy section; other fields, such as an apiVersion and kind, are
// ignored) and checks its durations, with upstream's errors. The
// configuration is mandatory: a nil reader is an error.
func LoadConfiguration(r io.Reader) (*Configuration, error) {
	if r == nil {
		return nil, errors.New("no config specified")
	}
	var fc fileConfig
	if err := yaml.NewYAMLOrJSONDecoder(r, 4096).Decode(&fc); err != nil {
		return nil, err
	}
	in := fc.ImagePolicyWebhook
	c := &Configuration{KubeConfigFile: in.KubeConfigFile, DefaultAllow: in.DefaultAllow}
	var err error
	if c.RetryBackoff, err = retryBackoffRule.normalize(in.RetryBackoff); err != nil {
		return nil, err
	}
	if c.AllowTTL, err = allowTTLRule.normalize(in.AllowTTL); err != nil {
		return nil, err
	}
	if c.DenyTTL, err = denyTTLRule.normalize(in.DenyTTL); err != nil {
		return nil, err
	}
	return c, nil
}
