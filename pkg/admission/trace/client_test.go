package trace

import "testing"

func TestClientOf(t *testing.T) {
	for _, tc := range []struct{ user, agent, want string }{
		{"system:serviceaccount:kube-system:replicaset-controller",
			"kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/admitd/system:serviceaccount:kube-system:replicaset-controller",
			"kube-controller-manager (replicaset-controller)"},
		{"system:kube-controller-manager", "kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/abc", "kube-controller-manager"},
		{"system:node:node-0", "kubelet/v1.37.2 (linux/amd64) kubernetes/admitd", "kubelet (node-0)"},
		{"system:serviceaccount:kube-system:replicaset-controller", "kubectl/v1.32.0 (linux/amd64)", ""},
		{"system:serviceaccount:team:builder", "kube-controller-manager/v1.37.2", ""},
		{"alice", "kubelet/v1.37.2", ""},
		{"system:kube-scheduler", "kube-scheduler/v1.37.2 (linux/amd64) kubernetes/admitd", "kube-scheduler"},
		{"admin", "", ""},
	} {
		if got := ClientOf(tc.user, tc.agent); got != tc.want {
			t.Errorf("ClientOf(%q, %q) = %q, want %q", tc.user, tc.agent, got, tc.want)
		}
	}
}
