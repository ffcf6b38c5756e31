package node_test

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/auth/node"
)

// A watch of pods, persistent volumes, volume attachments, resource slices
// and pod certificate requests feeds the graph; the authorizer reads it.
func Example() {
	g := node.NewGraph(nil)
	rules, err := node.BootstrapRules()
	if err != nil {
		panic(err)
	}
	a := node.New(g, rules)

	g.AddPod(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: corev1.PodSpec{NodeName: "worker-1", Volumes: []corev1.Volume{{Name: "tls",
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "web-tls"}}}}},
	})
	for _, n := range []string{"worker-1", "worker-2"} {
		d, reason, _ := a.Authorize(context.Background(), auth.Attributes{
			User:            authenticationv1.UserInfo{Username: "system:node:" + n, Groups: []string{auth.NodesGroup}},
			Verb:            "get",
			ResourceRequest: true,
			Resource:        "secrets",
			Namespace:       "default",
			Name:            "web-tls",
		})
		fmt.Printf("%s: allowed %v, reason %q\n", n, d == auth.DecisionAllow, reason)
	}
	// Output:
	// worker-1: allowed true, reason ""
	// worker-2: allowed false, reason "no relationship found between node 'worker-2' and this object"
}
