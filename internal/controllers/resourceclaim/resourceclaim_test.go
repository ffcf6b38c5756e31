package resourceclaim

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/controllers/controllertest"
)

const (
	ns          = "default"
	deviceClass = "gpu.example.com"
)

// claimSpec asks for one device of deviceClass, as request "req".
func claimSpec() resourcev1.ResourceClaimSpec {
	return resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
		{Name: "req", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: deviceClass}}}}}
}

// startServer starts a server with the DeviceClass and the template
// "gpu-template" (labelled and annotated).
func startServer(t *testing.T) *controllertest.Server {
	t.Helper()
	s := controllertest.Start(t)
	class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: deviceClass}}
	if _, err := s.Admin.ResourceV1().DeviceClasses().Create(s.Ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createTemplate(t, s, "gpu-template")
	return s
}

func createTemplate(t *testing.T, s *controllertest.Server, name string) {
	t.Helper()
	tmpl := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: resourcev1.ResourceClaimTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"kind": "gpu"}, Annotations: map[string]string{"note": "n"}},
			Spec:       claimSpec()}}
	if _, err := s.Admin.ResourceV1().ResourceClaimTemplates(ns).Create(s.Ctx, tmpl, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// runController starts the controller on s and returns its metrics.
func runController(t *testing.T, s *controllertest.Server) *Metrics {
	t.Helper()
	client, recorder := s.Controller(User, Component)
	m := NewMetrics()
	c, err := New(Config{Store: s.Store, Catalogue: s.Catalogue, Client: client, Recorder: recorder, Log: s.Log, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	go c.Run(s.Ctx)
	return m
}

// createPod creates the pod name whose claim "gpu" is made from the
// template tmpl.
func createPod(t *testing.T, s *controllertest.Server, name, tmpl string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.PodSpec{
		Containers:     []corev1.Container{{Name: "c", Image: "i", Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}}}},
		ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To(tmpl)}}}}
	pod, err := s.Admin.CoreV1().Pods(ns).Create(s.Ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

// recordedClaim waits for pod's status to name the claim of its "gpu"
// and returns that claim.
func recordedClaim(t *testing.T, s *controllertest.Server, pod string) *resourcev1.ResourceClaim {
	t.Helper()
	var name string
	controllertest.Eventually(t, 10*time.Second, "pod "+pod+"'s claim in its status", func() (bool, string) {
		p, err := s.Admin.CoreV1().Pods(ns).Get(s.Ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		st := p.Status.ResourceClaimStatuses
		if len(st) != 1 || st[0].Name != "gpu" || st[0].ResourceClaimName == nil {
			return false, fmt.Sprintf("statuses %+v", st)
		}
		name = *st[0].ResourceClaimName
		return true, ""
	})
	claim, err := s.Admin.ResourceV1().ResourceClaims(ns).Get(s.Ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the claim %s the status names: %v", name, err)
	}
	return claim
}

func listClaims(t *testing.T, s *controllertest.Server) []resourcev1.ResourceClaim {
	t.Helper()
	claims, err := s.Admin.ResourceV1().ResourceClaims(ns).List(s.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return claims.Items
}

// A pod's template claim gets a ResourceClaim made from the template,
// controlled by the pod and annotated with its claim's name, recorded in
// the pod's status by the controller's apply.
func TestClaimCreatedAndRecorded(t *testing.T) {
	s := startServer(t)
	m := runController(t, s)
	pod := createPod(t, s, "web", "gpu-template")
	claim := recordedClaim(t, s, "web")
	if claim.GenerateName != "web-gpu-" || !strings.HasPrefix(claim.Name, "web-gpu-") {
		t.Errorf("claim %s, generateName %q; want web-gpu-", claim.Name, claim.GenerateName)
	}
	owner := metav1.GetControllerOf(claim)
	if owner == nil || owner.UID != pod.UID || owner.Kind != "Pod" || owner.APIVersion != "v1" || owner.BlockOwnerDeletion != nil {
		t.Errorf("owner references %+v, want the pod as controller, not blocking its deletion", claim.OwnerReferences)
	}
	wantAnnotations := map[string]string{"note": "n", resourcev1.PodResourceClaimAnnotation: "gpu"}
	if claim.Labels["kind"] != "gpu" || fmt.Sprint(claim.Annotations) != fmt.Sprint(wantAnnotations) ||
		claim.Spec.Devices.Requests[0].Exactly.DeviceClassName != deviceClass {
		t.Errorf("claim %+v is not the template's", claim.ObjectMeta)
	}
	if n := len(listClaims(t, s)); n != 1 {
		t.Errorf("%d claims, want 1", n)
	}
	p, err := s.Admin.CoreV1().Pods(ns).Get(s.Ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var managers []string
	for _, f := range p.ManagedFields {
		managers = append(managers, f.Manager+"/"+string(f.Operation)+"/"+f.Subresource)
	}
	if !slices.Contains(managers, FieldManager+"/Apply/status") {
		t.Errorf("pod managers %q, want %s's apply of the status", managers, FieldManager)
	}
	want := "claims{false,false,resource_claim_template}=1 creates{success,false,,Pod}=1"
	controllertest.Eventually(t, 10*time.Second, "the metrics", func() (bool, string) {
		got := counted(t, m)
		return got == want, got + ", want " + want
	})
}

// A claim the pod controls, annotated for its claim, made before its
// status recorded it (the controller stopped in between) is recorded
// rather than a second one made.
func TestExistingClaimReused(t *testing.T) {
	s := startServer(t)
	pod := createPod(t, s, "db", "gpu-template")
	made := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "db-gpu-earlier", Namespace: ns,
		Annotations:     map[string]string{resourcev1.PodResourceClaimAnnotation: "gpu"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "db", UID: pod.UID, Controller: ptr.To(true)}}},
		Spec: claimSpec()}
	if _, err := s.Admin.ResourceV1().ResourceClaims(ns).Create(s.Ctx, made, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	runController(t, s)
	if claim := recordedClaim(t, s, "db"); claim.Name != "db-gpu-earlier" {
		t.Errorf("recorded %s, want db-gpu-earlier", claim.Name)
	}
	time.Sleep(200 * time.Millisecond) // what a second create would take
	if n := len(listClaims(t, s)); n != 1 {
		t.Errorf("%d claims, want the earlier one alone", n)
	}
}

// A pod whose template is missing gets no claim: a
// FailedResourceClaimCreation event says why, and the claim is made once
// the template is created.
func TestMissingTemplateReportedThenCreated(t *testing.T) {
	s := startServer(t)
	runController(t, s)
	pod := createPod(t, s, "late", "later-template")
	want := `PodResourceClaim gpu: resource claim template "later-template": resourceclaimtemplate.resource.k8s.io "later-template" not found`
	controllertest.Eventually(t, 10*time.Second, "the event on the pod", func() (bool, string) {
		events, err := s.Admin.CoreV1().Events(ns).List(s.Ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var got []string
		for _, e := range events.Items {
			if e.InvolvedObject.UID == pod.UID && e.Source.Component == Component {
				if e.Type == corev1.EventTypeWarning && e.Reason == "FailedResourceClaimCreation" && e.Message == want {
					return true, ""
				}
				got = append(got, e.Type+" "+e.Reason+": "+e.Message)
			}
		}
		return false, fmt.Sprintf("events %q", got)
	})
	if n := len(listClaims(t, s)); n != 0 {
		t.Fatalf("%d claims without a template", n)
	}
	createTemplate(t, s, "later-template")
	if claim := recordedClaim(t, s, "late"); !strings.HasPrefix(claim.Name, "late-gpu-") {
		t.Errorf("claim %s", claim.Name)
	}
}

// allocate has the scheduler's part: claim allocated, with the
// delete-protection finalizer, and reserved for pod.
func allocate(t *testing.T, s *controllertest.Server, claim *resourcev1.ResourceClaim, pod *corev1.Pod) *resourcev1.ResourceClaim {
	t.Helper()
	claim = claim.DeepCopy()
	claim.Finalizers = append(claim.Finalizers, resourcev1.Finalizer)
	claim, err := s.Admin.ResourceV1().ResourceClaims(ns).Update(s.Ctx, claim, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	claim.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
		{Request: "req", Driver: deviceClass, Pool: "pool", Device: "gpu-0"}}}}
	claim.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: pod.Name, UID: pod.UID}}
	if claim, err = s.Admin.ResourceV1().ResourceClaims(ns).UpdateStatus(s.Ctx, claim, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return claim
}

// A claim reserved for a pod that is deleted loses the reservation, then
// its allocation and its finalizer; the claim itself, a user's, stays.
func TestReservationOfDeletedPodRemoved(t *testing.T) {
	s := startServer(t)
	runController(t, s)
	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: ns}, Spec: claimSpec()}
	claim, err := s.Admin.ResourceV1().ResourceClaims(ns).Create(s.Ctx, claim, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "user", Namespace: ns}, Spec: corev1.PodSpec{NodeName: "n1",
		Containers:     []corev1.Container{{Name: "c", Image: "i"}},
		ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("shared")}}}}
	if pod, err = s.Admin.CoreV1().Pods(ns).Create(s.Ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	allocate(t, s, claim, pod)
	time.Sleep(200 * time.Millisecond) // the controller leaves a live pod's reservation
	if got := claimState(t, s, "shared"); got != "reserved for [user] allocated [resource.kubernetes.io/delete-protection]" {
		t.Fatalf("with the pod running: %s", got)
	}
	if err := s.Admin.CoreV1().Pods(ns).Delete(s.Ctx, "user", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, 10*time.Second, "the claim released", func() (bool, string) {
		got := claimState(t, s, "shared")
		return got == "reserved for [] unallocated []", got
	})
}

// claimState is the claim's reservations, allocation and finalizers.
func claimState(t *testing.T, s *controllertest.Server, name string) string {
	t.Helper()
	claim, err := s.Admin.ResourceV1().ResourceClaims(ns).Get(s.Ctx, name, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	var pods []string
	for _, r := range claim.Status.ReservedFor {
		pods = append(pods, r.Name)
	}
	allocated := "unallocated"
	if claim.Status.Allocation != nil {
		allocated = "allocated"
	}
	return fmt.Sprintf("reserved for %v %s %v", pods, allocated, claim.Finalizers)
}

// The generated claim of a pod that succeeded is released and deleted,
// the pod staying.
func TestClaimOfFinishedPodDeleted(t *testing.T) {
	s := startServer(t)
	runController(t, s)
	pod := createPod(t, s, "job", "gpu-template")
	claim := allocate(t, s, recordedClaim(t, s, "job"), pod)
	time.Sleep(200 * time.Millisecond) // the controller leaves a pending pod's claim
	if got := claimState(t, s, claim.Name); got != "reserved for [job] allocated [resource.kubernetes.io/delete-protection]" {
		t.Fatalf("with the pod pending: %s", got)
	}
	pod, err := s.Admin.CoreV1().Pods(ns).Get(s.Ctx, "job", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodSucceeded
	if _, err := s.Admin.CoreV1().Pods(ns).UpdateStatus(s.Ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, 10*time.Second, "the claim deleted", func() (bool, string) {
		_, err := s.Admin.ResourceV1().ResourceClaims(ns).Get(s.Ctx, claim.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), claimState(t, s, claim.Name)
	})
}

// A generated claim deleted while its pod's status names it is made
// again, and the status names the new one.
func TestDeletedClaimRecreated(t *testing.T) {
	s := startServer(t)
	runController(t, s)
	createPod(t, s, "api", "gpu-template")
	first := recordedClaim(t, s, "api")
	if err := s.Admin.ResourceV1().ResourceClaims(ns).Delete(s.Ctx, first.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, 10*time.Second, "a new claim recorded", func() (bool, string) {
		claims := listClaims(t, s)
		if len(claims) != 1 || claims[0].Name == first.Name {
			return false, fmt.Sprintf("%d claims", len(claims))
		}
		p, err := s.Admin.CoreV1().Pods(ns).Get(s.Ctx, "api", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		st := p.Status.ResourceClaimStatuses
		return len(st) == 1 && ptr.Deref(st[0].ResourceClaimName, "") == claims[0].Name, fmt.Sprintf("statuses %+v, claim %s", st, claims[0].Name)
	})
}
