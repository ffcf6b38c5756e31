package serviceaccount

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const (
	ns      = "ns"
	fresh   = "fresh" // its default account is in storage only
	missing = "empty" // no default account: upstream retries ten times
)

func account(namespace, name string, edit ...func(*corev1.ServiceAccount)) *corev1.ServiceAccount {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID(name + "-uid")}}
	for _, e := range edit {
		e(sa)
	}
	return sa
}

func enforce(value string, secrets ...string) func(*corev1.ServiceAccount) {
	return func(sa *corev1.ServiceAccount) {
		sa.Annotations = map[string]string{"kubernetes.io/enforce-mountable-secrets": value}
		for _, s := range secrets {
			sa.Secrets = append(sa.Secrets, corev1.ObjectReference{Name: s})
		}
	}
}

func pulls(names ...string) func(*corev1.ServiceAccount) {
	return func(sa *corev1.ServiceAccount) {
		for _, n := range names {
			sa.ImagePullSecrets = append(sa.ImagePullSecrets, corev1.LocalObjectReference{Name: n})
		}
	}
}

func automount(v bool) func(*corev1.ServiceAccount) {
	return func(sa *corev1.ServiceAccount) { sa.AutomountServiceAccountToken = ptr.To(v) }
}

// accountNames are the names pods use: those of ns's accounts, one stored
// only, one that does not exist.
var accountNames = []string{"", "default", "robot", "puller", "strict", "strict-false", "strict-bad", "strict-auto", "stored", "nobody"}

func newWorld() *world {
	return &world{
		cached: []*corev1.ServiceAccount{
			account(ns, "default"),
			account(ns, "robot", automount(false)),
			account(ns, "puller", pulls("p1", "p2")),
			account(ns, "strict", enforce("true", "s1"), pulls("p1")),
			account(ns, "strict-false", enforce("false", "s1")),
			account(ns, "strict-bad", enforce("yes")),
			account(ns, "strict-auto", enforce("TRUE", "s1", "s2"), pulls("p1", "p2"), automount(true)),
		},
		stored: []*corev1.ServiceAccount{
			account(ns, "stored", pulls("p2"), automount(false)),
			account(fresh, "default", pulls("p3")),
		},
	}
}
