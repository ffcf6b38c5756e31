package admission

import (
	"reflect"
	"testing"
)

func noopFactory(PluginContext) (Handler, error) { return &recorder{log: new([]string)}, nil }

// registration is one call of Register (before == "") or RegisterBefore.
type registration struct{ name, before string }

func newTestRegistry(regs ...registration) *Registry {
	r := NewRegistry()
	for _, g := range regs {
		if g.before == "" {
			r.Register(g.name, noopFactory)
		} else {
			r.RegisterBefore(g.name, g.before, noopFactory)
		}
	}
	return r
}

func TestRegistryEnabled(t *testing.T) {
	upstream := []registration{{name: "ValidatingAdmissionWebhook"}, {name: "NamespaceLifecycle"}, {name: "MutatingAdmissionWebhook"}, {name: "AlwaysDeny"}}
	own := append(upstream[:len(upstream):len(upstream)],
		registration{name: "Last"}, // after every upstream plugin, AlwaysDeny included
		registration{name: "EarlyA", before: "NamespaceLifecycle"},
		registration{name: "EarlyB", before: "NamespaceLifecycle"},
		registration{name: "BeforeOwn", before: "Last"},
		registration{name: "BeforeUnregistered", before: "LimitRanger"}, // an upstream name admitd lacks
	)
	cases := []struct {
		name            string
		regs            []registration
		enable, disable []string
		want            []string
		err             string
	}{
		{"defaults", upstream, nil, nil, []string{"NamespaceLifecycle", "MutatingAdmissionWebhook", "ValidatingAdmissionWebhook"}, ""},
		{"enable default-off, disable default-on", upstream, []string{"AlwaysDeny"}, []string{"NamespaceLifecycle"}, []string{"MutatingAdmissionWebhook", "ValidatingAdmissionWebhook", "AlwaysDeny"}, ""},
		{"unknown enable", upstream, []string{"Bogus"}, nil, nil, `enable-admission-plugins plugin "Bogus" is unknown`},
		{"unknown disable", upstream, nil, []string{"Bogus"}, nil, `disable-admission-plugins plugin "Bogus" is unknown`},
		{"upstream not implemented", upstream, []string{"LimitRanger"}, nil, nil, `enable-admission-plugins plugin "LimitRanger" is not implemented by admitd yet`},
		{"overlap", upstream, []string{"AlwaysDeny"}, []string{"AlwaysDeny"}, nil, "[AlwaysDeny] in enable-admission-plugins and disable-admission-plugins overlapped"},
		{"own plugins placed by the caller, on by default", own, nil, nil,
			[]string{"EarlyA", "EarlyB", "NamespaceLifecycle", "BeforeUnregistered", "MutatingAdmissionWebhook", "ValidatingAdmissionWebhook", "BeforeOwn", "Last"}, ""},
		{"own plugins disabled and enabled by name", own, []string{"AlwaysDeny", "Last"}, []string{"EarlyB", "BeforeOwn"},
			[]string{"EarlyA", "NamespaceLifecycle", "BeforeUnregistered", "MutatingAdmissionWebhook", "ValidatingAdmissionWebhook", "AlwaysDeny", "Last"}, ""},
		{"own name unknown to this registry", upstream, []string{"Last"}, nil, nil, `enable-admission-plugins plugin "Last" is unknown`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := newTestRegistry(tc.regs...).Enabled(tc.enable, tc.disable)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("Enabled(%v, %v) error = %v, want %q", tc.enable, tc.disable, err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Enabled(%v, %v) = %v, %v, want %v", tc.enable, tc.disable, got, err, tc.want)
			}
		})
	}
}

func TestRegisterPanics(t *testing.T) {
	cases := []struct {
		name string
		regs []registration
	}{
		{"upstream name twice", []registration{{name: "NamespaceLifecycle"}, {name: "NamespaceLifecycle"}}},
		{"own name twice", []registration{{name: "Mine"}, {name: "Mine"}}},
		{"own name twice, placed", []registration{{name: "Mine"}, {name: "Mine", before: "NamespaceLifecycle"}}},
		{"empty name", []registration{{name: ""}}},
		{"upstream name placed", []registration{{name: "NamespaceLifecycle", before: "AlwaysAdmit"}}},
		{"before an unknown name", []registration{{name: "Mine", before: "Bogus"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatalf("registering %v did not panic", tc.regs)
				}
			}()
			newTestRegistry(tc.regs...)
		})
	}
}

func TestRegistryNewChainKeepsNamesOrder(t *testing.T) {
	r := newTestRegistry(registration{name: "NamespaceLifecycle"}, registration{name: "Mine"})
	c, err := r.NewChain([]string{"Mine", "NamespaceLifecycle"}, PluginContext{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range c.Plugins() {
		got = append(got, p.Name)
	}
	if want := []string{"Mine", "NamespaceLifecycle"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("NewChain plugins = %v, want %v", got, want)
	}
	if _, err := r.NewChain([]string{"LimitRanger"}, PluginContext{}, nil); err == nil {
		t.Fatal("NewChain([LimitRanger]) = nil error, want not implemented")
	}
}

func TestRegistryEnabledExactly(t *testing.T) {
	regs := []registration{{name: "ValidatingAdmissionWebhook"}, {name: "NamespaceLifecycle"}, {name: "AlwaysDeny"}, {name: "Mine"}}
	cases := []struct {
		names []string
		want  []string
		err   string
	}{
		{[]string{"AlwaysDeny", "NamespaceLifecycle"}, []string{"NamespaceLifecycle", "AlwaysDeny"}, ""},
		{[]string{"Mine", "ValidatingAdmissionWebhook"}, []string{"ValidatingAdmissionWebhook", "Mine"}, ""},
		{nil, nil, ""},
		{[]string{"Bogus"}, nil, `admission-control plugin "Bogus" is unknown`},
		{[]string{"LimitRanger"}, nil, `admission-control plugin "LimitRanger" is not implemented by admitd yet`},
	}
	for _, tc := range cases {
		got, err := newTestRegistry(regs...).EnabledExactly(tc.names)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("EnabledExactly(%v) error = %v, want %q", tc.names, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("EnabledExactly(%v) = %v, %v, want %v", tc.names, got, err, tc.want)
		}
	}
}
