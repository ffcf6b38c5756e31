// Package pluginorder compares pkg/admission's order and default set of
// admission plugins with kube-apiserver's (pkg/kubeapiserver/options).
package pluginorder

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/kubernetes/pkg/kubeapiserver/options"

	"github.com/admitd/admitd/pkg/admission"
)

func registry() *admission.Registry {
	r := admission.NewRegistry()
	for _, n := range options.AllOrderedPlugins {
		r.Register(n, func(admission.PluginContext) (admission.Handler, error) { return nil, nil })
	}
	return r
}

func TestOrder(t *testing.T) {
	got, err := registry().Enabled(options.AllOrderedPlugins, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, options.AllOrderedPlugins) {
		t.Errorf("order = %v\nwant %v", got, options.AllOrderedPlugins)
	}
}

func TestDefaults(t *testing.T) {
	off := options.DefaultOffAdmissionPlugins()
	var want []string
	for _, n := range options.AllOrderedPlugins {
		if !off.Has(n) {
			want = append(want, n)
		}
	}
	got, err := registry().Enabled(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("on by default = %v\nwant %v", got, want)
	}
}

// TestNotUpstream checks that names of plugins newer than 1.37.2 are
// unknown, as kube-apiserver 1.37.2 says.
func TestNotUpstream(t *testing.T) {
	for _, n := range []string{"PodGroupWorkloadExists", "JobValidation"} {
		if slices.Contains(options.AllOrderedPlugins, n) {
			t.Errorf("%s is an upstream plugin now: drop it from this test", n)
			continue
		}
		_, err := registry().Enabled([]string{n}, nil)
		if err == nil || !strings.HasSuffix(err.Error(), "is unknown") {
			t.Errorf("Enabled([%s]) = %v, want unknown", n, err)
		}
	}
}
