package apiserver

import (
	"runtime"

	"k8s.io/apimachinery/pkg/version"
)

// Version of Kubernetes whose API admitd serves.
const (
	kubeMajor = "1"
	kubeMinor = "37"
	// the oldest minor version this one's API stays compatible with
	// (upstream's default: the previous minor)
	minCompatibilityMinor = "36"
)

// GitVersion is admitd's reported version, set at link time.
var GitVersion = "v1.37.2-admitd"

// versionInfo is /version's answer. The emulation version is the binary's
// own (admitd has no --emulated-version), as kube-apiserver's default.
func versionInfo() version.Info {
	return version.Info{
		Major: kubeMajor, Minor: kubeMinor,
		EmulationMajor: kubeMajor, EmulationMinor: kubeMinor,
		MinCompatibilityMajor: kubeMajor, MinCompatibilityMinor: minCompatibilityMinor,
		GitVersion: GitVersion, GitTreeState: "clean",
		GoVersion: runtime.Version(), Compiler: runtime.Compiler, Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
}
