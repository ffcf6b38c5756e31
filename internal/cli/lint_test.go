package cli

import (
	"strings"
	"testing"
)

const lintFixtures = "../../pkg/lint/testdata/"

func TestLintCommandFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantOut string
		wantErr string
	}{
		{"clean", []string{"-f", lintFixtures + "samplewebhook.yaml"}, "no findings\n", ""},
		// typed by the Pod's schema, the everyday image check is clean
		{"typed loop clean", []string{"-f", lintFixtures + "typed/everyday-loop.yaml", "--fail-on=info"}, "no findings\n", ""},
		{"typed nested loops", []string{"-f", lintFixtures + "typed/crd-nested-loops.yaml", "--fail-on=warning"}, "warning AL030", "at or above warning"},
		{"error fails", []string{"-f", lintFixtures + "AL001-kube-system.yaml"}, "error   AL001", "at or above error"},
		{"fail-on none", []string{"-f", lintFixtures + "AL001-kube-system.yaml", "--fail-on", "none"}, "error   AL001", ""},
		{"warning passes", []string{"-f", lintFixtures + "AL009-v1beta1-only.yaml"}, "warning AL009", ""},
		{"fail-on warning", []string{"-f", lintFixtures + "AL009-v1beta1-only.yaml", "--fail-on=warning"}, "warning AL009", "at or above warning"},
		{"json", []string{"-f", lintFixtures + "AL009-v1beta1-only.yaml", "-o", "json"}, `"id": "AL009"`, ""},
		{"sarif", []string{"-f", lintFixtures + "AL009-v1beta1-only.yaml", "-o", "sarif"}, `"version": "2.1.0"`, ""},
		{"bad output", []string{"-f", lintFixtures + "AL009-v1beta1-only.yaml", "-o", "xml"}, "", "--output must be text, json or sarif"},
		{"bad fail-on", []string{"-f", lintFixtures + "AL009-v1beta1-only.yaml", "--fail-on", "fatal"}, "", "--fail-on must be"},
		{"missing file", []string{"-f", lintFixtures + "nope.yaml"}, "", "no such file"},
		{"no kubeconfig", []string{"--kubeconfig", lintFixtures + "nope.kubeconfig"}, "", "no -f and no usable kubeconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runRoot(t, append([]string{"lint"}, tt.args...)...)
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("admitd lint %v output %q, want it to contain %q", tt.args, out, tt.wantOut)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("admitd lint %v error = %v, want none", tt.args, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("admitd lint %v error = %v, want one containing %q", tt.args, err, tt.wantErr)
			}
		})
	}
}
