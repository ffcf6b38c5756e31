package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	autoscalingv1ac "k8s.io/client-go/applyconfigurations/autoscaling/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// TestWhatControllersExpect runs, against one server, the behaviours
// controller frameworks and operators assume of kube-apiserver (issue 14):
// metadata-only responses, the kubernetes Service, discovery details,
// status and apply on subresources, event field selectors and DELETE codes.
func TestWhatControllersExpect(t *testing.T) {
	t.Parallel()
	// Without the workload controllers: the subtests write Deployments' and
	// ReplicaSets' status themselves, as a kube-apiserver alone allows.
	a := startAdmitd(t, t.TempDir(), "--storage", "memory", "--service-cluster-ip-range", "10.96.0.0/16", withoutWorkloadControllers)
	t.Run("metadata client and informers", func(t *testing.T) { metadataClientAndInformers(t, a) })
	t.Run("metadata negotiation errors", func(t *testing.T) { metadataNegotiation(t, a) })
	t.Run("kubernetes service", func(t *testing.T) { kubernetesService(t, a) })
	t.Run("create with resourceVersion", func(t *testing.T) { createWithResourceVersion(t, a) })
	t.Run("CRD version priority in discovery", func(t *testing.T) { crdVersionPriority(t, a) })
	t.Run("APIGroup of every group", func(t *testing.T) { apiGroupOfEveryGroup(t, a) })
	t.Run("apply on scale and status", func(t *testing.T) { applyOnSubresources(t, a) })
	t.Run("events.k8s.io field selectors", func(t *testing.T) { eventFieldSelectors(t, a) })
	t.Run("status writes keep metadata per kind", func(t *testing.T) { statusWritesKeepMetadata(t, a) })
	t.Run("delete status codes", func(t *testing.T) { deleteStatusCodes(t, a) })
	t.Run("kubelet subresources without a kubelet", func(t *testing.T) { kubeletSubresources(t, a) })
}

// metadataClientAndInformers reads ConfigMaps with client-go's metadata
// client (protobuf first, as it asks) and follows them with a metadata
// informer, whose watch events must carry PartialObjectMetadata.
func metadataClientAndInformers(t *testing.T, a *admitd) {
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(a.RestConfig(t))
	mc := metadata.NewForConfigOrDie(a.RestConfig(t))
	cms := corev1.SchemeGroupVersion.WithResource("configmaps")
	mkCM := func(name string) {
		t.Helper()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "meta"}}, Data: map[string]string{"big": "value"}}
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mkCM("meta-before")

	got, err := mc.Resource(cms).Namespace("default").Get(ctx, "meta-before", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("metadata Get: %v", err)
	}
	if got.Labels["app"] != "meta" {
		t.Errorf("metadata Get labels = %v, want app=meta", got.Labels)
	}
	list, err := mc.Resource(cms).Namespace("default").List(ctx, metav1.ListOptions{LabelSelector: "app=meta"})
	if err != nil {
		t.Fatalf("metadata List: %v", err)
	}
	if len(list.Items) != 1 || list.ResourceVersion == "" {
		t.Errorf("metadata List = %d items, rv %q; want 1 item and a resourceVersion", len(list.Items), list.ResourceVersion)
	}

	factory := metadatainformer.NewFilteredSharedInformerFactory(mc, 0, "default", nil)
	inf := factory.ForResource(cms).Informer()
	var mu sync.Mutex
	events := map[string]string{}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			m := o.(*metav1.PartialObjectMetadata)
			mu.Lock()
			events[m.Name] = "add"
			mu.Unlock()
		},
		DeleteFunc: func(o any) {
			if m, ok := o.(*metav1.PartialObjectMetadata); ok {
				mu.Lock()
				events[m.Name] = "delete"
				mu.Unlock()
			}
		},
	})
	infCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	factory.Start(infCtx.Done())
	if !cache.WaitForCacheSync(infCtx.Done(), inf.HasSynced) {
		t.Fatal("metadata informer did not sync")
	}
	mkCM("meta-after")
	if err := cs.CoreV1().ConfigMaps("default").Delete(ctx, "meta-before", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "metadata informer events", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return events["meta-after"] == "add" && events["meta-before"] == "delete"
	})
}

// metadataNegotiation checks the Accept clauses upstream answers with 406
// and the fallbacks between clauses.
func metadataNegotiation(t *testing.T, a *admitd) {
	c := a.HTTPClient(t)
	const pom = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
	cases := []struct {
		name, path, accept string
		code               int
		kind, apiVersion   string
	}{
		{"object as metadata", "/api/v1/namespaces/default", pom, 200, "PartialObjectMetadata", "meta.k8s.io/v1"},
		{"object as v1beta1 metadata", "/api/v1/namespaces/default", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1", 200, "PartialObjectMetadata", "meta.k8s.io/v1beta1"},
		{"list as metadata list", "/api/v1/namespaces", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", 200, "PartialObjectMetadataList", "meta.k8s.io/v1"},
		{"list as metadata", "/api/v1/namespaces", pom, 406, "Status", "v1"},
		{"object as metadata list", "/api/v1/namespaces/default", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", 406, "Status", "v1"},
		{"unknown as", "/api/v1/namespaces/default", "application/json;as=Foo;g=meta.k8s.io;v=v1", 406, "Status", "v1"},
		{"unknown as falls back", "/api/v1/namespaces/default", "application/json;as=Foo;g=meta.k8s.io;v=v1, application/json", 200, "Namespace", "v1"},
		{"table first", "/api/v1/namespaces", "application/json;as=Table;g=meta.k8s.io;v=v1," + pom, 200, "Table", "meta.k8s.io/v1"},
		{"protobuf metadata", "/api/v1/namespaces/default", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1," + pom, 200, "", ""},
		{"no protobuf table", "/api/v1/namespaces", "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", 200, "PartialObjectMetadataList", "meta.k8s.io/v1"},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest("GET", a.URL+tc.path, nil)
		req.Header.Set("Accept", tc.accept)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var tm metav1.TypeMeta
		_ = json.Unmarshal(body, &tm)
		if tc.kind == "" {
			// protobuf: the type is in the envelope, after the 4-byte magic.
			if ct := resp.Header.Get("Content-Type"); ct != "application/vnd.kubernetes.protobuf" || !strings.Contains(string(body), "PartialObjectMetadata") {
				t.Errorf("%s: GET %s = %d %s, want protobuf PartialObjectMetadata", tc.name, tc.path, resp.StatusCode, ct)
			}
			continue
		}
		if resp.StatusCode != tc.code || tm.Kind != tc.kind || tm.APIVersion != tc.apiVersion {
			t.Errorf("%s: GET %s = %d %s %s, want %d %s %s\n%s", tc.name, tc.path, resp.StatusCode, tm.APIVersion, tm.Kind, tc.code, tc.apiVersion, tc.kind, body)
		}
	}
	req, _ := http.NewRequest("POST", a.URL+"/api/v1/namespaces/default/configmaps", strings.NewReader(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"created-as-metadata"},"data":{"k":"v"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", pom)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 || !strings.Contains(string(body), `"kind":"PartialObjectMetadata"`) || strings.Contains(string(body), `"data"`) {
		t.Errorf("POST with Accept %s = %d %s, want 201 PartialObjectMetadata", pom, resp.StatusCode, body)
	}
	a.MustKubectl(t, "", "run", "deleted-as-metadata", "--image=nginx")
	req, _ = http.NewRequest("DELETE", a.URL+"/api/v1/namespaces/default/pods/deleted-as-metadata", nil)
	req.Header.Set("Accept", pom)
	if resp, err = c.Do(req); err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"kind":"PartialObjectMetadata"`) || strings.Contains(string(body), `"spec"`) {
		t.Errorf("DELETE of a pod with Accept %s = %d %s, want 200 PartialObjectMetadata", pom, resp.StatusCode, body)
	}
}

// kubernetesService finds default/kubernetes with kubectl: the first
// address of the service range, 443 to the secure port, and its Endpoints
// and EndpointSlice at this server; its address is not given to another.
func kubernetesService(t *testing.T, a *admitd) {
	// Bound to 127.0.0.1, the server advertises the host's address, as
	// kube-apiserver does (Endpoints may not hold a loopback address); a
	// host without one gets no endpoints.
	host, err := utilnet.ResolveBindAddress(net.ParseIP("127.0.0.1"))
	if err != nil {
		t.Skipf("no host address to advertise: %v", err)
	}
	port := a.URL[strings.LastIndex(a.URL, ":")+1:]
	var out string
	waitFor(t, "the kubernetes service and its endpoints", func() bool {
		var err error
		out, _, err = a.Kubectl(t, "", "get", "svc,endpoints,endpointslices", "-A", "-o", "custom-columns=KIND:.kind,NS:.metadata.namespace,NAME:.metadata.name", "--no-headers")
		return err == nil && strings.Count(out, "kubernetes") == 3
	})
	for _, want := range []string{"Service        default   kubernetes", "Endpoints      default   kubernetes", "EndpointSlice  default   kubernetes"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("kubectl get svc,endpoints,endpointslices -A:\n%s\nwant a line %q", out, want)
		}
	}
	svc := a.MustKubectl(t, "", "get", "svc", "-A")
	if !regexp.MustCompile(`default\s+kubernetes\s+ClusterIP\s+10\.96\.0\.1\s+<none>\s+443/TCP`).MatchString(svc) {
		t.Errorf("kubectl get svc -A:\n%s\nwant default/kubernetes ClusterIP 10.96.0.1 443/TCP", svc)
	}
	target := a.MustKubectl(t, "", "get", "svc", "kubernetes", "-o", "jsonpath={.spec.ports[0].name} {.spec.ports[0].targetPort} {.metadata.labels.component}")
	if target != "https "+port+" apiserver" {
		t.Errorf("kubernetes service port = %q, want %q", target, "https "+port+" apiserver")
	}
	ep := a.MustKubectl(t, "", "get", "endpoints", "kubernetes", "-o", "jsonpath={.subsets[0].addresses[0].ip}:{.subsets[0].ports[0].port} {.metadata.labels.endpointslice\\.kubernetes\\.io/skip-mirror}")
	if want := host.String() + ":" + port + " true"; ep != want {
		t.Errorf("kubernetes endpoints = %q, want %q", ep, want)
	}
	slice := a.MustKubectl(t, "", "get", "endpointslice", "kubernetes", "-o", "jsonpath={.addressType} {.endpoints[0].addresses[0]} {.ports[0].port} {.metadata.labels.kubernetes\\.io/service-name}")
	if want := "IPv4 " + host.String() + " " + port + " kubernetes"; slice != want {
		t.Errorf("kubernetes endpointslice = %q, want %q", slice, want)
	}
	_, errOut, err := a.Kubectl(t, "", "create", "service", "clusterip", "taker", "--clusterip", "10.96.0.1", "--tcp", "80")
	if err == nil || !strings.Contains(errOut, "provided IP is already allocated") {
		t.Errorf("creating a service with the kubernetes service's address: err %v, %s; want provided IP is already allocated", err, errOut)
	}
}

// createWithResourceVersion creates objects that carry a resourceVersion:
// a dry run succeeds, an invalid object is refused by validation first,
// and otherwise the storage's 500 answers.
func createWithResourceVersion(t *testing.T, a *admitd) {
	ctx := t.Context()
	cms := kubernetes.NewForConfigOrDie(a.RestConfig(t)).CoreV1().ConfigMaps("default")
	cm := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "42"}}
	}
	if _, err := cms.Create(ctx, cm("rv-dry"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("dry-run create with resourceVersion: %v, want success", err)
	}
	_, err := cms.Create(ctx, cm("RV_Invalid"), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Errorf("create of an invalid object with resourceVersion: %v, want 422 Invalid", err)
	}
	_, err = cms.Create(ctx, cm("rv-set"), metav1.CreateOptions{})
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Code != 500 || st.Status().Message != "resourceVersion should not be set on objects to be created" {
		t.Errorf("create with resourceVersion: %v, want 500 resourceVersion should not be set on objects to be created", err)
	}
}

const prioritizedCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.priority.example.com
spec:
  group: priority.example.com
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo}
  versions:
  - {name: foo, served: true, storage: false, schema: {openAPIV3Schema: {type: object}}}
  - {name: v1alpha1, served: true, storage: false, schema: {openAPIV3Schema: {type: object}}}
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
  - {name: v1beta1, served: true, storage: false, schema: {openAPIV3Schema: {type: object}}}
  - {name: v2, served: true, storage: false, schema: {openAPIV3Schema: {type: object}}}
`

// crdVersionPriority lists a CRD's versions, given in a shuffled order,
// through client-go's legacy and aggregated discovery: Kubernetes version
// priority, the highest preferred.
func crdVersionPriority(t *testing.T, a *admitd) {
	a.MustKubectl(t, prioritizedCRD, "apply", "-f", "-")
	want := []string{"v2", "v1", "v1beta1", "v1alpha1", "foo"}
	cfg := a.RestConfig(t)
	waitFor(t, "the CRD's versions in discovery", func() bool {
		g, err := discoveryGroup(cfg, false, "priority.example.com")
		return err == nil && len(g.Versions) == len(want)
	})
	for _, aggregated := range []bool{false, true} {
		g, err := discoveryGroup(cfg, aggregated, "priority.example.com")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range g.Versions {
			got = append(got, v.Version)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") || g.PreferredVersion.Version != "v2" {
			t.Errorf("discovery (aggregated %v) versions = %v preferred %q, want %v preferred v2", aggregated, got, g.PreferredVersion.Version, want)
		}
	}
	out := a.MustKubectl(t, "", "get", "--raw", "/apis/priority.example.com")
	var g metav1.APIGroup
	if err := json.Unmarshal([]byte(out), &g); err != nil || g.PreferredVersion.Version != "v2" || len(g.Versions) != 5 || g.Versions[0].Version != "v2" {
		t.Errorf("GET /apis/priority.example.com = %s (%v), want v2 first and preferred", out, err)
	}
}

// discoveryGroup reads one group from /apis with client-go's discovery
// client, aggregated or legacy.
func discoveryGroup(cfg *rest.Config, aggregated bool, name string) (*metav1.APIGroup, error) {
	dc := discovery.NewDiscoveryClientForConfigOrDie(cfg)
	dc.UseLegacyDiscovery = !aggregated
	groups, err := dc.ServerGroups()
	if err != nil {
		return nil, err
	}
	for i := range groups.Groups {
		if groups.Groups[i].Name == name {
			return &groups.Groups[i], nil
		}
	}
	return nil, fmt.Errorf("group %s not in discovery", name)
}

// apiGroupOfEveryGroup reads GET /apis/<group> for every group /apis
// lists, built-in and custom, and finds the same APIGroup.
func apiGroupOfEveryGroup(t *testing.T, a *admitd) {
	cfg := a.RestConfig(t)
	dc := discovery.NewDiscoveryClientForConfigOrDie(cfg)
	dc.UseLegacyDiscovery = true
	groups, err := dc.ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	rc := dc.RESTClient()
	for _, want := range groups.Groups {
		if want.Name == "" {
			continue
		}
		body, err := rc.Get().AbsPath("/apis/" + want.Name).DoRaw(t.Context())
		if err != nil {
			t.Errorf("GET /apis/%s: %v", want.Name, err)
			continue
		}
		var got metav1.APIGroup
		if err := json.Unmarshal(body, &got); err != nil || got.Kind != "APIGroup" || got.Name != want.Name ||
			got.PreferredVersion != want.PreferredVersion || len(got.Versions) != len(want.Versions) {
			t.Errorf("GET /apis/%s = %s, want the APIGroup of /apis %+v", want.Name, body, want)
		}
	}
	if _, err := rc.Get().AbsPath("/apis/nothing.example.com").DoRaw(t.Context()); !apierrors.IsNotFound(err) {
		t.Errorf("GET /apis/nothing.example.com: %v, want 404", err)
	}
	body, err := rc.Get().AbsPath("/api").DoRaw(t.Context())
	var versions metav1.APIVersions
	if err != nil || json.Unmarshal(body, &versions) != nil || versions.Kind != "APIVersions" || len(versions.Versions) != 1 || versions.Versions[0] != "v1" {
		t.Errorf("GET /api = %s (%v), want APIVersions [v1]", body, err)
	}
}

// applyOnSubresources applies to a Deployment's /scale and /status with
// client-go: the scale's manager owns spec.replicas of the Deployment
// (subresource scale, the Deployment's apiVersion) beside the creator.
func applyOnSubresources(t *testing.T, a *admitd) {
	ctx := t.Context()
	deps := kubernetes.NewForConfigOrDie(a.RestConfig(t)).AppsV1().Deployments("default")
	dep := appsv1ac.Deployment("scaled", "default").WithSpec(appsv1ac.DeploymentSpec().WithReplicas(1).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": "scaled"})).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(map[string]string{"app": "scaled"}).
			WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("c").WithImage("nginx")))))
	if _, err := deps.Apply(ctx, dep, metav1.ApplyOptions{FieldManager: "creator"}); err != nil {
		t.Fatal(err)
	}
	_, err := deps.ApplyScale(ctx, "scaled", autoscalingv1ac.Scale().WithSpec(autoscalingv1ac.ScaleSpec().WithReplicas(3)), metav1.ApplyOptions{FieldManager: "scaler"})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `conflict with "creator": .spec.replicas`) {
		t.Errorf("apply to /scale of a field another applier owns: %v, want upstream's conflict", err)
	}
	sc, err := deps.ApplyScale(ctx, "scaled", autoscalingv1ac.Scale().WithSpec(autoscalingv1ac.ScaleSpec().WithReplicas(3)), metav1.ApplyOptions{FieldManager: "scaler", Force: true})
	if err != nil || sc.Spec.Replicas != 3 {
		t.Fatalf("forced apply to /scale = %v, %v; want 3 replicas", sc, err)
	}
	got, err := deps.Get(ctx, "scaled", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var scaler, creator *metav1.ManagedFieldsEntry
	for i, e := range got.ManagedFields {
		switch e.Manager {
		case "scaler":
			scaler = &got.ManagedFields[i]
		case "creator":
			creator = &got.ManagedFields[i]
		}
	}
	if *got.Spec.Replicas != 3 || scaler == nil || scaler.Operation != metav1.ManagedFieldsOperationApply || scaler.Subresource != "scale" ||
		scaler.APIVersion != "apps/v1" || string(scaler.FieldsV1.Raw) != `{"f:spec":{"f:replicas":{}}}` {
		t.Errorf("after apply to /scale: replicas %d, scaler entry %+v; want 3 and an Apply entry of scale owning spec.replicas", *got.Spec.Replicas, scaler)
	}
	if creator == nil || strings.Contains(string(creator.FieldsV1.Raw), `"f:replicas"`) {
		t.Errorf("after a forced apply to /scale the creator still owns spec.replicas: %+v", creator)
	}
	status := appsv1ac.Deployment("scaled", "default").WithStatus(appsv1ac.DeploymentStatus().WithObservedGeneration(7))
	if _, err := deps.ApplyStatus(ctx, status, metav1.ApplyOptions{FieldManager: "statuser"}); err != nil {
		t.Errorf("apply to /status: %v", err)
	}
}

// eventFieldSelectors lists events.k8s.io/v1 Events by the field labels
// upstream maps for that version, and core/v1 Events by source.
func eventFieldSelectors(t *testing.T, a *admitd) {
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(a.RestConfig(t))
	events := cs.EventsV1().Events("default")
	mk := func(name, reason, typ, kind, controller string) {
		t.Helper()
		ev := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: name}, EventTime: metav1.NowMicro(),
			Reason: reason, Type: typ, Action: "Testing", Note: "n", ReportingController: controller, ReportingInstance: controller + "-1",
			Regarding: corev1.ObjectReference{Kind: kind, Namespace: "default", Name: name + "-target", APIVersion: "v1"}}
		if _, err := events.Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mk("ev-a", "Started", "Normal", "Pod", "example.com/ctrl-a")
	mk("ev-b", "Failed", "Warning", "Node", "example.com/ctrl-b")
	for sel, want := range map[string]string{
		"reason=Started":                          "ev-a",
		"type=Warning":                            "ev-b",
		"regarding.kind=Pod":                      "ev-a",
		"regarding.name=ev-b-target":              "ev-b",
		"regarding.namespace=default,type=Normal": "ev-a",
		"reportingController=example.com/ctrl-b":  "ev-b",
		"metadata.name=ev-a":                      "ev-a",
	} {
		list, err := events.List(ctx, metav1.ListOptions{FieldSelector: sel})
		var got []string
		for _, e := range list.Items {
			if strings.HasPrefix(e.Name, "ev-") {
				got = append(got, e.Name)
			}
		}
		if err != nil || strings.Join(got, ",") != want {
			t.Errorf("list events.k8s.io/v1 events with %q = %v, %v; want [%s]", sel, got, err, want)
		}
	}
	_, err := events.List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Pod"})
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "field label not supported: involvedObject.kind") {
		t.Errorf("list events.k8s.io/v1 events by involvedObject.kind: %v, want 400 field label not supported", err)
	}
	coreEvents := cs.CoreV1().Events("default")
	for name, src := range map[string]corev1.EventSource{"core-kubelet": {Component: "kubelet"}, "core-reported": {}} {
		ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name}, Reason: "R", Type: "Normal", Source: src,
			ReportingController: "example.com/reporter", InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p"}}
		if _, err := coreEvents.Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for sel, want := range map[string]string{"source=kubelet": "core-kubelet", "source=example.com/reporter,involvedObject.kind=Pod": "core-reported"} {
		core, err := coreEvents.List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil || len(core.Items) != 1 || core.Items[0].Name != want {
			t.Errorf("list core/v1 events with %q = %v, %v; want %s", sel, core, err, want)
		}
	}
}

// statusWritesKeepMetadata updates metadata through /status with client-go:
// a Deployment keeps the new annotations and finalizers but not labels, a
// Pod keeps labels but not owner references, a custom resource keeps none,
// as upstream's status strategies.
func statusWritesKeepMetadata(t *testing.T, a *admitd) {
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(a.RestConfig(t))
	deps := cs.AppsV1().Deployments("default")
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "statusmeta", Labels: map[string]string{"l": "old"}},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "s"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "s"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}}
	dep, err := deps.Create(ctx, dep, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dep.Labels = map[string]string{"l": "new"}
	dep.Annotations = map[string]string{"a": "new"}
	dep.Finalizers = []string{"example.com/keep"}
	dep.Status.ObservedGeneration = 1
	got, err := deps.UpdateStatus(ctx, dep, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels["l"] != "old" || got.Annotations["a"] != "new" || len(got.Finalizers) != 1 || got.Status.ObservedGeneration != 1 {
		t.Errorf("Deployment after a status write: labels %v annotations %v finalizers %v; want old labels, new annotations and finalizers",
			got.Labels, got.Annotations, got.Finalizers)
	}
	got.Finalizers = nil
	if _, err := deps.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	pods := cs.CoreV1().Pods("default")
	pod, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "statusmeta"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Labels = map[string]string{"l": "new"}
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "0b9e1d3a-1111-2222-3333-444455556666"}}
	pod.Status.Message = "status write"
	gotPod, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if gotPod.Labels["l"] != "new" || len(gotPod.OwnerReferences) != 0 || gotPod.Status.Message != "status write" {
		t.Errorf("Pod after a status write: labels %v ownerReferences %v; want the new labels and no owner references", gotPod.Labels, gotPod.OwnerReferences)
	}
}

// deleteStatusCodes deletes objects that stay with client-go's REST client:
// 200 with the object (202 only for orphanDependents=false), and a
// Namespace DELETE reaches a validating webhook with the namespace's uid
// as precondition, as kube-apiserver's namespace storage adds it.
func deleteStatusCodes(t *testing.T, a *admitd) {
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(a.RestConfig(t))
	var mu sync.Mutex
	var nsOptions []string
	hook := startWebhookServer(t, func(_ string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		if req.Operation == admissionv1.Delete && req.Resource.Resource == "namespaces" {
			mu.Lock()
			nsOptions = append(nsOptions, string(req.Options.Raw))
			mu.Unlock()
		}
		return &admissionv1.AdmissionResponse{Allowed: true}
	})
	a.MustKubectl(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: e2e-namespace-deletes}
webhooks:
- name: namespaces.e2e.admitd.io
  clientConfig: {url: "`+hook.url+`/validate", caBundle: "`+hook.caBundle+`"}
  rules: [{operations: [DELETE], apiGroups: [""], apiVersions: [v1], resources: [namespaces]}]
  sideEffects: None
  admissionReviewVersions: [v1]
`, "apply", "-f", "-")
	cms := cs.CoreV1().ConfigMaps("default")
	for _, name := range []string{"stays", "stays-orphan"} {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: []string{"example.com/hold"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rc := cs.CoreV1().RESTClient()
	del := func(path string, body string) (int, metav1.TypeMeta) {
		t.Helper()
		var code int
		req := rc.Delete().AbsPath(path)
		if body != "" {
			req = req.Body([]byte(body)).SetHeader("Content-Type", "application/json")
		}
		raw, err := req.SetHeader("Accept", "application/json").Do(ctx).StatusCode(&code).Raw()
		if err != nil {
			t.Fatalf("DELETE %s: %v", path, err)
		}
		var tm metav1.TypeMeta
		_ = json.Unmarshal(raw, &tm)
		return code, tm
	}
	if code, tm := del("/api/v1/namespaces/default/configmaps/stays", ""); code != 200 || tm.Kind != "ConfigMap" {
		t.Errorf("DELETE of a ConfigMap with a finalizer = %d %s, want 200 ConfigMap", code, tm.Kind)
	}
	if code, tm := del("/api/v1/namespaces/default/configmaps/stays-orphan", `{"orphanDependents":false}`); code != 202 || tm.Kind != "ConfigMap" {
		t.Errorf("DELETE with orphanDependents=false of a ConfigMap with a finalizer = %d %s, want 202 ConfigMap", code, tm.Kind)
	}
	for _, name := range []string{"stays", "stays-orphan"} {
		_, _ = cms.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	}
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "deleted-ns"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if code, tm := del("/api/v1/namespaces/deleted-ns", ""); code != 200 || tm.Kind != "Namespace" {
		t.Errorf("DELETE of a namespace = %d %s, want 200 Namespace", code, tm.Kind)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(nsOptions) != 1 || !strings.Contains(nsOptions[0], `"preconditions":{"uid":"`+string(ns.UID)+`"}`) {
		t.Errorf("the webhook saw namespace DELETE options %v, want preconditions.uid %s", nsOptions, ns.UID)
	}
}

// kubeletSubresources runs kubectl logs and exec, and reads the proxy
// subresources, with no kubelet: upstream's errors, never the object.
func kubeletSubresources(t *testing.T, a *admitd) {
	a.MustKubectl(t, `apiVersion: v1
kind: Pod
metadata: {name: unscheduled}
spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: scheduled}
spec:
  nodeName: node-a
  containers: [{name: a, image: nginx}, {name: b, image: nginx}]
---
apiVersion: v1
kind: Service
metadata: {name: lonely}
spec: {selector: {app: none}, ports: [{port: 80}]}
`, "apply", "-f", "-")
	out, errOut, err := a.Kubectl(t, "", "logs", "unscheduled")
	if err != nil || out != "" {
		t.Errorf("kubectl logs of an unscheduled pod = %q, %q, %v; want an empty log", out, errOut, err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"exec", "unscheduled", "--", "ls"}, "pod unscheduled does not have a host assigned"},
		{[]string{"get", "--raw", "/api/v1/namespaces/default/pods/scheduled/log"}, "a container name must be specified for pod scheduled, choose one of: [a b]"},
		{[]string{"logs", "scheduled", "-c", "z"}, "container z is not valid for pod scheduled"},
		{[]string{"logs", "scheduled", "-c", "a"}, `nodes "node-a" not found`},
		{[]string{"get", "--raw", "/api/v1/namespaces/default/pods/unscheduled/proxy/"}, "address not allowed"},
		{[]string{"get", "--raw", "/api/v1/namespaces/default/services/lonely/proxy/"}, `no endpoints available for service "lonely"`},
	}
	for _, tc := range cases {
		out, errOut, err := a.Kubectl(t, "", tc.args...)
		if err == nil || !strings.Contains(errOut, tc.want) || strings.Contains(out, "apiVersion") {
			t.Errorf("kubectl %s = %q, %q, %v; want an error with %q", strings.Join(tc.args, " "), out, errOut, err, tc.want)
		}
	}
}
