// Package runtimeconfig compares admitd's --runtime-config (internal/registry
// APIEnablement) with kube-apiserver 1.37's: the group versions upstream's
// three schemes know and its default resource configurations (regenerated
// into internal/registry/runtime_config_upstream.go with
// go test ./runtimeconfig -run TestUpstreamTables -update), and
// MergeAPIResourceConfigs and the flag's validation on the same inputs.
package runtimeconfig
