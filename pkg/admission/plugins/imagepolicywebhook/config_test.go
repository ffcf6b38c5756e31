package imagepolicywebhook_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/admission/plugins/imagepolicywebhook"
)

func TestLoadConfiguration(t *testing.T) {
	cases := []struct {
		name, in string
		want     imagepolicywebhook.Configuration
		wantErr  string
	}{
		{"defaults", `imagePolicy: {kubeConfigFile: k}`,
			imagepolicywebhook.Configuration{KubeConfigFile: "k", AllowTTL: 5 * time.Minute, DenyTTL: 30 * time.Second, RetryBackoff: 500 * time.Millisecond}, ""},
		{"yaml", "imagePolicy:\n  kubeConfigFile: k\n  allowTTL: 50\n  denyTTL: 40\n  retryBackoff: 300\n  defaultAllow: true\n",
			imagepolicywebhook.Configuration{KubeConfigFile: "k", AllowTTL: 50 * time.Second, DenyTTL: 40 * time.Second, RetryBackoff: 300 * time.Millisecond, DefaultAllow: true}, ""},
		{"json", `{"imagePolicy": {"kubeConfigFile": "k", "allowTTL": 1800, "denyTTL": 1, "retryBackoff": 300000}}`,
			imagepolicywebhook.Configuration{KubeConfigFile: "k", AllowTTL: 30 * time.Minute, DenyTTL: time.Second, RetryBackoff: 5 * time.Minute}, ""},
		{"disabled", `imagePolicy: {kubeConfigFile: k, allowTTL: -1, denyTTL: -1, retryBackoff: -1}`,
			imagepolicywebhook.Configuration{KubeConfigFile: "k"}, ""},
		{"inside an AdmissionConfiguration entry", "apiVersion: apiserver.config.k8s.io/v1\nkind: ImagePolicyWebhookConfiguration\nimagePolicy:\n  kubeConfigFile: k\n  unknown: 1\n",
			imagepolicywebhook.Configuration{KubeConfigFile: "k", AllowTTL: 5 * time.Minute, DenyTTL: 30 * time.Second, RetryBackoff: 500 * time.Millisecond}, ""},
		{"backoff too long", `imagePolicy: {retryBackoff: 300001}`, imagepolicywebhook.Configuration{}, "valid value is between 1ns and 5m0s, got 5m0.001s"},
		{"negative backoff", `imagePolicy: {retryBackoff: -5}`, imagepolicywebhook.Configuration{}, "valid value is between 1ns and 5m0s, got -5ms"},
		{"allow TTL too long", `imagePolicy: {allowTTL: 1801}`, imagepolicywebhook.Configuration{}, "valid value is between 1s and 30m0s, got 30m1s"},
		{"deny TTL negative", `imagePolicy: {denyTTL: -2}`, imagepolicywebhook.Configuration{}, "valid value is between 1s and 30m0s, got -2s"},
		{"backoff checked first", `imagePolicy: {denyTTL: -2, retryBackoff: -2}`, imagepolicywebhook.Configuration{}, "valid value is between 1ns and 5m0s, got -2ms"},
		{"not a number", `imagePolicy: {allowTTL: 1.5}`, imagepolicywebhook.Configuration{},
			"error unmarshaling JSON: while decoding JSON: json: cannot unmarshal number 1.5 into Go struct field imagePolicyWebhookConfig.imagePolicy.allowTTL of type time.Duration"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := imagepolicywebhook.LoadConfiguration(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("LoadConfiguration = %v, want error %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("LoadConfiguration = %+v, want %+v", *got, tc.want)
			}
		})
	}
}

func TestFactoryErrors(t *testing.T) {
	if _, err := build(""); err == nil || err.Error() != `couldn't init admission plugin "ImagePolicyWebhook": no config specified` {
		t.Errorf("no configuration: %v", err)
	}
	missing := "imagePolicy: {kubeConfigFile: /nonexistent/kubeconfig}"
	if _, err := build(missing); err == nil || !strings.Contains(err.Error(), "/nonexistent/kubeconfig") {
		t.Errorf("missing kubeconfig: %v", err)
	}
	// A kubeconfig with two clusters and no current context names no backend.
	kc := writeFile(t, "kubeconfig", `apiVersion: v1
kind: Config
clusters:
- {name: a, cluster: {server: "https://127.0.0.1:1"}}
- {name: b, cluster: {server: "https://127.0.0.1:2"}}
`)
	if _, err := build("imagePolicy: {kubeConfigFile: " + kc + "}"); err == nil {
		t.Error("kubeconfig without context: built, want an error")
	}
}

// FuzzLoadConfiguration: any document is read or refused, never a panic;
// what is read has its durations within upstream's bounds, or disabled.
func FuzzLoadConfiguration(f *testing.F) {
	for _, seed := range []string{
		"imagePolicy: {kubeConfigFile: k, allowTTL: 50, denyTTL: 50, retryBackoff: 500, defaultAllow: true}",
		`{"imagePolicy": {"allowTTL": -1, "denyTTL": 0, "retryBackoff": 300000}}`,
		"imagePolicy: {allowTTL: 9223372036854775807}",
		"imagePolicy: [",
		"",
		"apiVersion: v1\nkind: X\nimagePolicy: {denyTTL: 1.5}",
	} {
		f.Add(seed)
	}
	within := func(d, lo, hi time.Duration) bool { return d == 0 || (d >= lo && d <= hi) }
	f.Fuzz(func(t *testing.T, doc string) {
		c, err := imagepolicywebhook.LoadConfiguration(strings.NewReader(doc))
		if err != nil {
			return
		}
		if !within(c.AllowTTL, time.Second, 30*time.Minute) || !within(c.DenyTTL, time.Second, 30*time.Minute) ||
			!within(c.RetryBackoff, time.Nanosecond, 5*time.Minute) {
			t.Fatalf("LoadConfiguration(%q) = %+v: a duration out of bounds", doc, *c)
		}
	})
}
