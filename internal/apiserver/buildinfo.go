package apiserver

import (
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// RegisterBuildInfo registers kube-apiserver's kubernetes_build_info with
// reg, a gauge of 1 whose labels are what /version answers, and
// version_info.
func RegisterBuildInfo(reg prometheus.Registerer) {
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kubernetes_build_info",
		Help: "[BETA] A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running."},
		[]string{"major", "minor", "git_version", "git_commit", "git_tree_state", "build_date", "go_version", "compiler", "platform"})
	v := versionInfo()
	info.WithLabelValues(v.Major, v.Minor, v.GitVersion, v.GitCommit, v.GitTreeState, v.BuildDate, v.GoVersion, v.Compiler, v.Platform).Set(1)
	reg.MustRegister(info, compatibilityVersionInfo())
}

// compatibilityVersionInfo is component-base's version_info of the "kube"
// component: admitd's binary version, and the Kubernetes version whose
// API it serves as its emulation version, compatible with the minor
// version before (it has no --emulated-version to lower either).
func compatibilityVersionInfo() prometheus.Collector {
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "version_info",
		Help: "[ALPHA] Provides the compatibility version info of the component. The component label is the name of the component, usually kube, but is relevant for aggregated-apiservers."},
		[]string{"component", "binary", "emulation", "min_compat"})
	minor, _ := strconv.Atoi(kubeMinor)
	info.WithLabelValues("kube", strings.TrimPrefix(GitVersion, "v"), kubeMajor+"."+kubeMinor, kubeMajor+"."+strconv.Itoa(minor-1)).Set(1)
	return info
}
