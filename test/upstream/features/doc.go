// Package features compares pkg/features's table of feature gates with the
// gates kube-apiserver 1.37 registers in utilfeature.DefaultMutableFeatureGate,
// and regenerates the table (go test ./features -run TestKnownGates -update).
package features
