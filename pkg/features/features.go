// Package features is kube-apiserver 1.37's feature gates, as
// --feature-gates sets them: every gate upstream's API server knows, at its
// 1.37 default, with upstream's parsing and errors (unknown gates, gates
// locked to their default). Admission plugins read the gates they care
// about through admission.PluginContext.
package features

import (
	"sort"
	"sync"

	"k8s.io/component-base/featuregate"
)

// The gates admission plugins read.
const (
	// GenericWorkload makes PodGroupProtection act.
	GenericWorkload = "GenericWorkload"
	// WorkloadWithJob needs GenericWorkload; no admission plugin of
	// kube-apiserver 1.37.2 reads it (JobValidation is not in 1.37.2).
	WorkloadWithJob = "WorkloadWithJob"
	// NodeDeclaredFeatures makes NodeDeclaredFeatureValidator act.
	NodeDeclaredFeatures = "NodeDeclaredFeatures"
	// InPlacePodVerticalScaling makes PodResizeValidator act.
	InPlacePodVerticalScaling = "InPlacePodVerticalScaling"
	// PodTopologyLabelsAdmission makes PodTopologyLabels act.
	PodTopologyLabelsAdmission = "PodTopologyLabelsAdmission"
	// ClusterTrustBundle makes ClusterTrustBundleAttest act.
	ClusterTrustBundle = "ClusterTrustBundle"
	// PodLevelResources makes LimitRanger's Pod limits read spec.resources.
	PodLevelResources = "PodLevelResources"
)

// Gates is a set of feature gates. The zero value is not usable: use New.
type Gates struct {
	fg featuregate.MutableVersionedFeatureGate
}

// New returns every gate at its kube-apiserver 1.37 default.
func New() *Gates {
	fg := featuregate.NewFeatureGate()
	if err := fg.AddVersioned(known()); err != nil {
		panic(err) // the table is built in: a programming error
	}
	deps := make(map[featuregate.Feature][]featuregate.Feature, len(dependencies))
	for f, d := range dependencies {
		deps[f] = append([]featuregate.Feature(nil), d...) // AddDependencies sorts in place
	}
	if err := fg.AddDependencies(deps); err != nil {
		panic(err)
	}
	return &Gates{fg: fg}
}

// Set applies a --feature-gates value ("A=true,B=false"), with upstream's
// errors for a malformed value, an unknown gate or one locked to its default.
func (g *Gates) Set(value string) error { return g.fg.Set(value) }

// SetFromMap sets gates by name, as Set.
func (g *Gates) SetFromMap(m map[string]bool) error { return g.fg.SetFromMap(m) }

// Enabled reports whether the named gate is on; an unknown gate is off.
func (g *Gates) Enabled(name string) bool {
	if _, ok := known()[featuregate.Feature(name)]; !ok {
		return false
	}
	return g.fg.Enabled(featuregate.Feature(name))
}

// Spec returns the named gate's spec at 1.37 (its default, prerelease and
// whether it is locked to its default); false for an unknown gate.
func Spec(name string) (featuregate.FeatureSpec, bool) {
	if _, ok := known()[featuregate.Feature(name)]; !ok {
		return featuregate.FeatureSpec{}, false
	}
	return defaults().fg.GetAll()[featuregate.Feature(name)], true
}

// Known returns the names of every gate, sorted.
func Known() []string {
	out := make([]string, 0, len(known()))
	for f := range known() {
		out = append(out, string(f))
	}
	sort.Strings(out)
	return out
}

// defaults are the gates at their defaults, built on first use (building
// them takes milliseconds every command, `admitd version` included, would
// otherwise pay at start).
var defaults = sync.OnceValue(New)

// Default reports whether the named gate is on by default in 1.37.
func Default(name string) bool { return defaults().Enabled(name) }
