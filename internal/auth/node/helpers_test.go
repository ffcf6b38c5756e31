package node

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"

	"github.com/admitd/admitd/internal/auth"
)

func nodeUser(name string) authenticationv1.UserInfo {
	return authenticationv1.UserInfo{Username: UserPrefix + name, Groups: []string{auth.NodesGroup, auth.AllAuthenticated}}
}

// attrs is a resource request of node n: verb group/resource/sub ns/name.
func attrs(n, verb, group, resource, sub, ns, name string) auth.Attributes {
	return auth.Attributes{User: nodeUser(n), Verb: verb, ResourceRequest: true, APIGroup: group,
		Resource: resource, Subresource: sub, Namespace: ns, Name: name}
}

func withNodeSelector(a auth.Attributes, node string) auth.Attributes {
	a.FieldSelector = fields.Requirements{{Field: "spec.nodeName", Operator: selection.Equals, Value: node}}
	return a
}

func newPod(ns, name, node string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{NodeName: node}}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func withSecretVolume(secret string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "s-" + secret,
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}})
	}
}

func withPVC(claim string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "c-" + claim,
			VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
	}
}

func withConfigMapEnv(cm string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "c",
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}}})
	}
}

func withServiceAccount(sa string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.ServiceAccountName = sa }
}

func newPV(name, claimNS, claim string, mutate ...func(*corev1.PersistentVolume)) *corev1.PersistentVolume {
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if claim != "" {
		pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: claimNS, Name: claim}
	}
	for _, m := range mutate {
		m(pv)
	}
	return pv
}

// decide runs a and fails the test on an error.
func decide(t testing.TB, a *Authorizer, at auth.Attributes) (auth.Decision, string) {
	t.Helper()
	d, reason, err := a.Authorize(context.Background(), at)
	if err != nil {
		t.Fatalf("Authorize(%+v) error %v", at, err)
	}
	return d, reason
}

func newAuthorizer(t testing.TB, g *Graph) *Authorizer {
	t.Helper()
	rules, err := BootstrapRules()
	if err != nil {
		t.Fatal(err)
	}
	return New(g, rules)
}
