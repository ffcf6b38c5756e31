package apiserver

import "github.com/prometheus/client_golang/prometheus"

// RegisterBuildInfo registers kube-apiserver's kubernetes_build_info with
// reg: a gauge of 1 whose labels are what /version answers.
func RegisterBuildInfo(reg prometheus.Registerer) {
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kubernetes_build_info",
		Help: "[BETA] A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running."},
		[]string{"major", "minor", "git_version", "git_commit", "git_tree_state", "build_date", "go_version", "compiler", "platform"})
	v := versionInfo()
	info.WithLabelValues(v.Major, v.Minor, v.GitVersion, v.GitCommit, v.GitTreeState, v.BuildDate, v.GoVersion, v.Compiler, v.Platform).Set(1)
	reg.MustRegister(info)
}
