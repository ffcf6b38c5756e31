package trace

import "strings"

// ClientOf names the cluster component a request comes from, from its
// user and User-Agent: a kube-controller-manager controller acting as its
// service account in kube-system ("kube-controller-manager
// (replicaset-controller)"), kube-controller-manager itself, or a node's
// kubelet ("kubelet (node-0)"); "" for anyone else. The User-Agent's
// first word must agree with the user, so that a user's own client is not
// named a controller by its name alone.
func ClientOf(user, userAgent string) string {
	program, _, _ := strings.Cut(userAgent, "/")
	switch program {
	case "kube-controller-manager":
		if account, ok := strings.CutPrefix(user, "system:serviceaccount:kube-system:"); ok {
			return program + " (" + account + ")"
		}
		if user == "system:kube-controller-manager" {
			return program
		}
	case "kube-scheduler":
		if user == "system:kube-scheduler" {
			return program
		}
	case "kubelet":
		if node, ok := strings.CutPrefix(user, "system:node:"); ok {
			return program + " (" + node + ")"
		}
	}
	return ""
}
