// Package workloads replays kubectl sessions with kube-controller-manager's
// controllers (Deployments, ReplicaSets, DaemonSets, Jobs, CronJobs,
// StatefulSets, Endpoints, disruption budgets, pod GC, CSR signing) and
// simulated nodes against the built
// admitd binary, comparing what they make with recordings of the real
// kube-apiserver and kube-controller-manager 1.37.2. It is a package of its
// own so that go test runs it beside test/e2e, each within the per-package
// timeout.
package workloads

import (
	"testing"

	"github.com/admitd/admitd/test/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

type admitd = harness.Admitd

var startAdmitd = harness.Start
