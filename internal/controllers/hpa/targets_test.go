package hpa

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/controllertest"
)

var podTemplate = corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: appLabels},
	Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}

// Every kind of the scale subresource is a target: ReplicaSets,
// StatefulSets and ReplicationControllers above maxReplicas are scaled
// down to it.
func TestBuiltinTargetsScaleToMax(t *testing.T) {
	e := start(t)
	five := ptr.To[int32](5)
	selector := &metav1.LabelSelector{MatchLabels: appLabels}
	if _, err := e.admin.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: ns},
		Spec: appsv1.ReplicaSetSpec{Replicas: five, Selector: selector, Template: podTemplate}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.admin.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "sts", Namespace: ns},
		Spec: appsv1.StatefulSetSpec{Replicas: five, Selector: selector, Template: podTemplate}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.admin.CoreV1().ReplicationControllers(ns).Create(ctx, &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: ns},
		Spec: corev1.ReplicationControllerSpec{Replicas: five, Selector: appLabels, Template: &podTemplate}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	targets := []struct{ apiVersion, kind, name string }{{"apps/v1", "ReplicaSet", "rs"}, {"apps/v1", "StatefulSet", "sts"}, {"v1", "ReplicationController", "rc"}}
	for _, tg := range targets {
		e.createAutoscaler(autoscaler(tg.name, tg.name, nil, 2, func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: tg.apiVersion, Kind: tg.kind, Name: tg.name}
		}))
	}
	for _, tg := range targets {
		e.waitEvent(tg.name, corev1.EventTypeNormal, "SuccessfulRescale", "New size: 2; reason: Current number of replicas above Spec.MaxReplicas")
	}
	controllertest.Eventually(t, 10*time.Second, "targets at 2 replicas", func() (bool, string) {
		rs, _ := e.admin.AppsV1().ReplicaSets(ns).Get(ctx, "rs", metav1.GetOptions{})
		sts, _ := e.admin.AppsV1().StatefulSets(ns).Get(ctx, "sts", metav1.GetOptions{})
		rc, _ := e.admin.CoreV1().ReplicationControllers(ns).Get(ctx, "rc", metav1.GetOptions{})
		got := []int32{*rs.Spec.Replicas, *sts.Spec.Replicas, *rc.Spec.Replicas}
		return fmt.Sprint(got) == "[2 2 2]", fmt.Sprint(got)
	})
}

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// widgetCRD is a custom resource with the scale subresource, its selector
// at .status.selector.
func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	obj := func(props map[string]apiextensionsv1.JSONSchemaProps) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props}
	}
	return &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"}, Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
		Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: ptr.To(obj(map[string]apiextensionsv1.JSONSchemaProps{
				"spec":   obj(map[string]apiextensionsv1.JSONSchemaProps{"replicas": {Type: "integer"}}),
				"status": obj(map[string]apiextensionsv1.JSONSchemaProps{"replicas": {Type: "integer"}, "selector": {Type: "string"}})}))},
			Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
				Scale: &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas",
					LabelSelectorPath: ptr.To(".status.selector")}}}}}}
}

// A custom resource with the scale subresource is a target too; one
// whose scale has no selector cannot be autoscaled on metrics.
func TestCustomResourceTarget(t *testing.T) {
	e := start(t)
	dyn, err := controllers.NewClient(e.server.Loopback(controllertest.AdminUser))
	if err != nil {
		t.Fatal(err)
	}
	crd, err := runtime.DefaultUnstructuredConverter.ToUnstructured(widgetCRD())
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: crd}
	u.SetAPIVersion("apiextensions.k8s.io/v1")
	u.SetKind("CustomResourceDefinition")
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crds).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// What admitd serve's custom resource sync does once the definition
	// is stored: the in-process test server runs none.
	e.server.Catalogue.SetCustom("widgets.example.com", e.server.Catalogue.CustomResourcesOf(widgetCRD()))
	createWidget(t, dyn, "w", 5)
	e.createAutoscaler(autoscaler("w", "w", nil, 3, func(h *autoscalingv2.HorizontalPodAutoscaler) {
		h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "w"}
	}))
	e.waitEvent("w", corev1.EventTypeNormal, "SuccessfulRescale", "New size: 3; reason: Current number of replicas above Spec.MaxReplicas")
	e.waitEvent("w", corev1.EventTypeWarning, "SelectorRequired", "selector is required")
	e.waitConditions("w", []cond{
		{autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale"},
		{autoscalingv2.ScaledToZero, corev1.ConditionFalse, "NotScaledToZero", "the HPA controller did not scale the workload to zero"},
		{autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", "the HPA target's scale is missing a selector"},
	}, nil)
	w, err := dyn.Resource(widgets).Namespace(ns).Get(ctx, "w", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _ := unstructured.NestedInt64(w.Object, "spec", "replicas"); n != 3 {
		t.Fatalf("widget at %d replicas, want 3", n)
	}
}

// createWidget creates a Widget of replicas, retrying while its
// resource is not yet served.
func createWidget(t *testing.T, dyn dynamic.Interface, name string, replicas int64) {
	t.Helper()
	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name, "namespace": ns}, "spec": map[string]any{"replicas": replicas}}}
	controllertest.Eventually(t, 10*time.Second, "widget created", func() (bool, string) {
		_, err := dyn.Resource(widgets).Namespace(ns).Create(ctx, w, metav1.CreateOptions{})
		return err == nil, fmt.Sprint(err)
	})
}
