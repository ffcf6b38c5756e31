package server

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// TestAdmissionFlagErrors: the plugin and feature-gate flags fail the
// start with kube-apiserver's messages.
func TestAdmissionFlagErrors(t *testing.T) {
	cases := []struct {
		name string
		set  func(*Options)
		want string
	}{
		{"admission-control with enable", func(o *Options) {
			o.AdmissionControl, o.EnableAdmissionPlugins = []string{"NamespaceLifecycle"}, []string{"AlwaysDeny"}
		}, "admission-control and enable-admission-plugins/disable-admission-plugins flags are mutually exclusive"},
		{"admission-control with disable", func(o *Options) {
			o.AdmissionControl, o.DisableAdmissionPlugins = []string{"NamespaceLifecycle"}, []string{"AlwaysDeny"}
		}, "mutually exclusive"},
		{"admission-control unknown", func(o *Options) { o.AdmissionControl = []string{"Bogus"} }, `admission-control plugin "Bogus" is unknown`},
		{"unknown gate", func(o *Options) { o.FeatureGates = "NoSuchGate=true" }, "unrecognized feature gate: NoSuchGate"},
		{"bad gate value", func(o *Options) { o.FeatureGates = "GenericWorkload=maybe" }, "invalid value of GenericWorkload=maybe"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
			o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			tc.set(&o)
			s, err := Start(context.Background(), o)
			if err == nil {
				_ = s.Close()
				t.Fatalf("Start succeeded, want error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Start error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestAdmissionControlRunsExactlyTheNamed: --admission-control with only
// NamespaceLifecycle starts, and a gate set on the command line is on.
func TestAdmissionControlRunsExactlyTheNamed(t *testing.T) {
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	o.AdmissionControl = []string{"ValidatingAdmissionWebhook", "NamespaceLifecycle"}
	o.FeatureGates = "GenericWorkload=true"
	s, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := s.AdmissionPlugins()
	if strings.Join(got, ",") != "NamespaceLifecycle,ValidatingAdmissionWebhook" {
		t.Fatalf("plugins = %v, want NamespaceLifecycle,ValidatingAdmissionWebhook", got)
	}
}
