package audit

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/admitd/admitd/testenv"
)

// TestClusterParamsSeedTheEvaluation: a live cluster's param (a ConfigMap
// a binding names, listed before the deployments) is there for every
// deployment, not only for its own evaluation.
func TestClusterParamsSeedTheEvaluation(t *testing.T) {
	env := testenv.Start(t)
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, o := range objects(t, `apiVersion: v1
kind: Namespace
metadata: {name: params}
---
apiVersion: v1
kind: Namespace
metadata: {name: apps}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: limits, namespace: params}
data: {maxReplicas: "4"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: big, namespace: apps}
spec: {replicas: 6, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: img}]}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: small, namespace: apps}
spec: {replicas: 2, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: img}]}}}`) {
		gvr := map[string]string{"Namespace": "namespaces", "ConfigMap": "configmaps", "Deployment": "deployments"}[o.GetKind()]
		gv := o.GroupVersionKind().GroupVersion()
		var ri dynamic.ResourceInterface = dyn.Resource(gv.WithResource(gvr))
		if ns := o.GetNamespace(); ns != "" {
			ri = dyn.Resource(gv.WithResource(gvr)).Namespace(ns)
		}
		if _, err := ri.Create(ctx, o.Unstructured, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	config := objects(t, paramConfig)[:2] // max-replicas and its binding
	r, err := Run(ctx, &Cluster{Config: env.Config, PageSize: 50}, Options{Config: config, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	var denied []string
	for _, f := range find(t, r, "ValidatingAdmissionPolicy", "max-replicas", "max-replicas").Denied {
		denied = append(denied, f.Object.Name+": "+f.Message)
	}
	if want := []string{"big: at most 4 replicas"}; !slices.Equal(denied, want) {
		t.Errorf("denied %v, want %v", denied, want)
	}
	if p := find(t, r, "ValidatingAdmissionPolicy", "max-replicas", "max-replicas"); len(p.Errors) != 0 || p.Matched != 2 {
		t.Errorf("matched %d, errors %+v; want 2, none", p.Matched, p.Errors)
	}
}
