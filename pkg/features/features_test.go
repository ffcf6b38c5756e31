package features

import (
	"slices"
	"strings"
	"testing"
)

// TestSet pins upstream's --feature-gates errors (component-base's
// featuregate at emulation version 1.37).
func TestSet(t *testing.T) {
	cases := []struct {
		value   string
		wantErr string
	}{
		{"", ""},
		{"GenericWorkload=true", ""},
		{" GenericWorkload = true ,", ""},
		{"Foo=true", "unrecognized feature gate: Foo"},
		{"GenericWorkload", "missing bool value for GenericWorkload"},
		{"GenericWorkload=maybe", `invalid value of GenericWorkload=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax`},
		{"InPlacePodVerticalScaling=false", "cannot set feature gate InPlacePodVerticalScaling to false, feature is locked to true"},
		{"InPlacePodVerticalScaling=true", ""},
		{"NodeDeclaredFeatures=false", "cannot set feature gate NodeDeclaredFeatures to false, feature is locked to true"},
		{"WorkloadWithJob=true", "WorkloadWithJob is enabled, but depends on features that are disabled: [GenericWorkload]"},
		{"WorkloadWithJob=true,GenericWorkload=true", ""},
		{"CompositePodGroup=true,GenericWorkload=true", "CompositePodGroup is enabled, but depends on features that are disabled: [TopologyAwareWorkloadScheduling]"},
	}
	for _, tc := range cases {
		err := New().Set(tc.value)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.wantErr {
			t.Errorf("Set(%q) = %q, want %q", tc.value, got, tc.wantErr)
		}
	}
}

func TestSetLeavesGatesOnError(t *testing.T) {
	g := New()
	if err := g.Set("GenericWorkload=true,Foo=true"); err == nil {
		t.Fatal("Set with an unknown gate = nil, want an error")
	}
	if g.Enabled(GenericWorkload) {
		t.Error("Enabled(GenericWorkload) = true after a failed Set, want false")
	}
}

func TestAllAlphaAllBeta(t *testing.T) {
	// Alpha gates depend on GenericWorkload, beta and off by default: upstream
	// refuses AllAlpha=true alone, listing each (in map order).
	err := New().Set("AllAlpha=true")
	if err == nil {
		t.Fatal(`Set("AllAlpha=true") = nil, want the dependency errors`)
	}
	for _, want := range []string{
		"WorkloadWithJob is enabled, but depends on features that are disabled: [GenericWorkload]",
		"CompositePodGroup is enabled, but depends on features that are disabled: [GenericWorkload]",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf(`Set("AllAlpha=true") = %q, want it to contain %q`, err, want)
		}
	}

	g := New()
	if err := g.Set("AllAlpha=true,AllBeta=true"); err != nil {
		t.Fatalf(`Set("AllAlpha=true,AllBeta=true") = %v`, err)
	}
	for _, n := range []string{"WorkloadWithJob", "GenericWorkload", "DRANodeAllocatableResources"} {
		if !g.Enabled(n) {
			t.Errorf("Enabled(%s) = false with AllAlpha and AllBeta, want true", n)
		}
	}

	g = New()
	if err := g.Set("AllBeta=false,PodTopologyLabelsAdmission=true"); err != nil {
		t.Fatal(err)
	}
	if !g.Enabled(PodTopologyLabelsAdmission) {
		t.Error("Enabled(PodTopologyLabelsAdmission) = false, want true: an explicit gate wins over AllBeta")
	}
	if g.Enabled("APIResponseCompression") {
		t.Error("Enabled(APIResponseCompression) = true with AllBeta=false, want false")
	}
	if !g.Enabled(InPlacePodVerticalScaling) {
		t.Error("Enabled(InPlacePodVerticalScaling) = false with AllBeta=false, want true: GA gates stay")
	}
}

func TestDefaults(t *testing.T) {
	for name, want := range map[string]bool{
		GenericWorkload:            false,
		WorkloadWithJob:            false,
		NodeDeclaredFeatures:       true,
		InPlacePodVerticalScaling:  true,
		PodTopologyLabelsAdmission: true,
		"NoSuchGate":               false,
	} {
		if got := Default(name); got != want {
			t.Errorf("Default(%s) = %v, want %v", name, got, want)
		}
	}
	if k := Known(); !slices.IsSorted(k) || len(k) < 250 || slices.Contains(k, "AllAlpha") {
		t.Errorf("Known() = %d gates (sorted %v), want every kube-apiserver gate, sorted, without AllAlpha", len(k), slices.IsSorted(k))
	}
}
