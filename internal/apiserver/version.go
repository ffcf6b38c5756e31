package apiserver

import (
	"runtime"

	"k8s.io/apimachinery/pkg/version"
)

// Version of Kubernetes whose API admitd serves.
const (
	kubeMajor = "1"
	kubeMinor = "37"
)

// GitVersion is admitd's reported version, set at link time.
var GitVersion = "v1.37.2-admitd"

func versionInfo() version.Info {
	return version.Info{
		Major: kubeMajor, Minor: kubeMinor, GitVersion: GitVersion, GitTreeState: "clean",
		GoVersion: runtime.Version(), Compiler: runtime.Compiler, Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
}
