package registry

// Expected values follow upstream kubernetes/kubernetes
// pkg/registry/core/pod/strategy.go (and pkg/apis/core/helper/qos),
// pkg/registry/core/namespace/strategy.go, pkg/registry/core/service
// (strategy.go and storage/alloc.go), pkg/registry/apps/*/strategy.go and
// pkg/registry/batch/job/strategy.go.

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func resources(req, lim string) corev1.ResourceRequirements {
	var r corev1.ResourceRequirements
	if req != "" {
		r.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(req), corev1.ResourceMemory: resource.MustParse("64Mi")}
	}
	if lim != "" {
		r.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(lim), corev1.ResourceMemory: resource.MustParse("64Mi")}
	}
	return r
}

func TestPreparePodForCreate(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  corev1.ResourceRequirements
		qos  corev1.PodQOSClass
	}{
		{"no resources", corev1.ResourceRequirements{}, corev1.PodQOSBestEffort},
		{"requests only", resources("100m", ""), corev1.PodQOSBurstable},
		{"requests below limits", resources("100m", "200m"), corev1.PodQOSBurstable},
		{"limits only (requests defaulted)", resources("", "200m"), corev1.PodQOSGuaranteed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{
				Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "x:1", Resources: tc.res}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1"},
			}
			defaultPod(pod)
			preparePodForCreate(pod)
			want := corev1.PodStatus{Phase: corev1.PodPending, QOSClass: tc.qos}
			if !apiequality.Semantic.DeepEqual(pod.Status, want) {
				t.Errorf("prepared Pod status = %+v, want %+v", pod.Status, want)
			}
		})
	}
}

func TestPreparePodSchedulingGatesAndAffinity(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "rev": "7"}},
		Spec: corev1.PodSpec{
			SchedulingGates: []corev1.PodSchedulingGate{{Name: "example.com/quota"}},
			Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, MatchLabelKeys: []string{"rev"}, TopologyKey: "zone",
			}}}},
		},
	}
	preparePodForCreate(pod)
	if len(pod.Status.Conditions) != 1 || pod.Status.Conditions[0].Reason != corev1.PodReasonSchedulingGated || pod.Status.Conditions[0].Status != corev1.ConditionFalse {
		t.Errorf("gated Pod conditions = %+v, want one PodScheduled=False SchedulingGated", pod.Status.Conditions)
	}
	got := pod.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchExpressions
	want := []metav1.LabelSelectorRequirement{{Key: "rev", Operator: metav1.LabelSelectorOpIn, Values: []string{"7"}}}
	if !apiequality.Semantic.DeepEqual(got, want) {
		t.Errorf("matchLabelKeys merged = %+v, want %+v", got, want)
	}
}

func TestPreparePodAppArmorAnnotation(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"container.apparmor.security.beta.kubernetes.io/a": "localhost/custom"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "x:1"}}},
	}
	preparePodForCreate(pod)
	want := &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr.To("custom")}
	if sc := pod.Spec.Containers[0].SecurityContext; sc == nil || !apiequality.Semantic.DeepEqual(sc.AppArmorProfile, want) {
		t.Errorf("container appArmorProfile = %+v, want %+v", sc, want)
	}
}

func TestPrepareNamespace(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"},
		Spec:   corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"example.com/cleanup"}},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	PrepareForCreate(resourceFor(t, ns), ns)
	if got, want := ns.Spec.Finalizers, []corev1.FinalizerName{"example.com/cleanup", "kubernetes"}; !apiequality.Semantic.DeepEqual(got, want) {
		t.Errorf("created Namespace finalizers = %v, want %v", got, want)
	}
	if ns.Status.Phase != corev1.NamespaceActive {
		t.Errorf("created Namespace phase = %s, want Active", ns.Status.Phase)
	}
	upd := ns.DeepCopy()
	upd.Spec.Finalizers = nil
	upd.Status.Phase = corev1.NamespaceTerminating
	PrepareForUpdate(resourceFor(t, ns), "", upd, ns)
	if !apiequality.Semantic.DeepEqual(upd.Spec, ns.Spec) || !apiequality.Semantic.DeepEqual(upd.Status, ns.Status) {
		t.Errorf("updated Namespace spec/status = %+v/%+v, want the old %+v/%+v", upd.Spec, upd.Status, ns.Spec, ns.Status)
	}
}

func TestPrepareJobSelector(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi", UID: "1234"},
		Spec:   batchv1.JobSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "pi"}}}},
		Status: batchv1.JobStatus{Active: 3}}
	jobs := resourceFor(t, job)
	jobs.Default(job)
	PrepareForCreate(jobs, job)
	wantLabels := map[string]string{"app": "pi", "job-name": "pi", "batch.kubernetes.io/job-name": "pi",
		"controller-uid": "1234", "batch.kubernetes.io/controller-uid": "1234"}
	if got := job.Spec.Template.Labels; !apiequality.Semantic.DeepEqual(got, wantLabels) {
		t.Errorf("Job template labels = %v, want %v", got, wantLabels)
	}
	wantSel := &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": "1234"}}
	if !apiequality.Semantic.DeepEqual(job.Spec.Selector, wantSel) {
		t.Errorf("Job selector = %v, want %v", job.Spec.Selector, wantSel)
	}
	if job.Status.Active != 0 {
		t.Errorf("created Job status.active = %d, want 0 (status cleared)", job.Status.Active)
	}

	// A Job without labels, its template without labels either (a
	// CronJob's), shows the generated ones, as upstream's reads do.
	bare := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "hello-1", UID: "5678"}}
	jobs.Default(bare)
	PrepareForCreate(jobs, bare)
	wantBare := map[string]string{"job-name": "hello-1", "batch.kubernetes.io/job-name": "hello-1",
		"controller-uid": "5678", "batch.kubernetes.io/controller-uid": "5678"}
	if !apiequality.Semantic.DeepEqual(bare.Labels, wantBare) {
		t.Errorf("Job labels = %v, want the template's generated %v", bare.Labels, wantBare)
	}

	manual := &batchv1.Job{Spec: batchv1.JobSpec{ManualSelector: ptr.To(true)}}
	PrepareForCreate(jobs, manual)
	if manual.Spec.Selector != nil {
		t.Errorf("manualSelector Job got selector %v, want none generated", manual.Spec.Selector)
	}
}

func TestPrepareDaemonSetTemplateGeneration(t *testing.T) {
	ds := &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "a:1"}}}}}}
	prepareDaemonSetForCreate(ds)
	if got := ds.Annotations[appsv1.DeprecatedTemplateGeneration]; got != "1" {
		t.Fatalf("created DaemonSet template generation = %q, want \"1\"", got)
	}
	same := ds.DeepCopy()
	prepareDaemonSetForUpdate(same, ds)
	if got := same.Annotations[appsv1.DeprecatedTemplateGeneration]; got != "1" {
		t.Errorf("DaemonSet update without template change: generation = %q, want \"1\"", got)
	}
	changed := ds.DeepCopy()
	changed.Spec.Template.Spec.Containers[0].Image = "a:2"
	prepareDaemonSetForUpdate(changed, ds)
	if got := changed.Annotations[appsv1.DeprecatedTemplateGeneration]; got != "2" {
		t.Errorf("DaemonSet update with template change: generation = %q, want \"2\"", got)
	}
}

func TestPrepareServiceIPFamilies(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spec     corev1.ServiceSpec
		policy   *corev1.IPFamilyPolicy
		families []corev1.IPFamily
		ips      []string
	}{
		{"cluster IP", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: map[string]string{"a": "b"}},
			ptr.To(corev1.IPFamilyPolicySingleStack), []corev1.IPFamily{corev1.IPv4Protocol}, nil},
		{"headless without selector", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "None"},
			ptr.To(corev1.IPFamilyPolicyPreferDualStack), []corev1.IPFamily{corev1.IPv4Protocol}, []string{"None"}},
		{"fixed IPv6 cluster IP", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "fd00::10"},
			ptr.To(corev1.IPFamilyPolicySingleStack), []corev1.IPFamily{corev1.IPv6Protocol}, []string{"fd00::10"}},
		{"external name", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}, nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := &corev1.Service{Spec: tc.spec, Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "1.2.3.4"}}}}}
			PrepareForCreate(resourceFor(t, svc), svc)
			if !apiequality.Semantic.DeepEqual(svc.Spec.IPFamilyPolicy, tc.policy) || !apiequality.Semantic.DeepEqual(svc.Spec.IPFamilies, tc.families) ||
				!apiequality.Semantic.DeepEqual(svc.Spec.ClusterIPs, tc.ips) {
				t.Errorf("prepared Service policy/families/clusterIPs = %v/%v/%v, want %v/%v/%v",
					ptr.Deref(svc.Spec.IPFamilyPolicy, ""), svc.Spec.IPFamilies, svc.Spec.ClusterIPs, ptr.Deref(tc.policy, ""), tc.families, tc.ips)
			}
			if len(svc.Status.LoadBalancer.Ingress) != 0 {
				t.Errorf("created Service status = %+v, want empty", svc.Status)
			}
		})
	}
}

func TestPrepareForUpdateKeepsStatus(t *testing.T) {
	old := &appsv1.Deployment{Status: appsv1.DeploymentStatus{Replicas: 3, ReadyReplicas: 2}}
	upd := &appsv1.Deployment{Status: appsv1.DeploymentStatus{Replicas: 9}}
	PrepareForUpdate(resourceFor(t, old), "", upd, old)
	if !apiequality.Semantic.DeepEqual(upd.Status, old.Status) {
		t.Errorf("updated Deployment status = %+v, want the old %+v", upd.Status, old.Status)
	}
	oldSvc := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"}}}
	newSvc := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}}
	PrepareForUpdate(resourceFor(t, oldSvc), "", newSvc, oldSvc)
	if newSvc.Spec.ClusterIP != "10.96.0.10" || len(newSvc.Spec.ClusterIPs) != 1 {
		t.Errorf("updated Service clusterIP/clusterIPs = %q/%v, want the allocated 10.96.0.10 kept", newSvc.Spec.ClusterIP, newSvc.Spec.ClusterIPs)
	}
}

func TestPrepareServiceAccountSecrets(t *testing.T) {
	sa := &corev1.ServiceAccount{Secrets: []corev1.ObjectReference{{Name: "tok", Namespace: "other", UID: "u"}}}
	cleanServiceAccountSecrets(sa)
	if want := []corev1.ObjectReference{{Name: "tok"}}; !apiequality.Semantic.DeepEqual(sa.Secrets, want) {
		t.Errorf("ServiceAccount secrets = %v, want %v", sa.Secrets, want)
	}
}

// TestPrepareTemplateGenerations: as kube-apiserver 1.37.2 (recorded): a
// Deployment's generation grows on an update of its annotations alone, a
// PodTemplate's starts at 1 and grows when its template changes.
func TestPrepareTemplateGenerations(t *testing.T) {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Generation: 2}}
	annotated := d.DeepCopy()
	annotated.Annotations = map[string]string{"foo": "bar"}
	if got := PrepareForUpdate(resourceFor(t, d), "", annotated, d).(*appsv1.Deployment).Generation; got != 3 {
		t.Errorf("annotated Deployment: generation %d, want 3", got)
	}
	pt := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "pt"}}
	templates := resourceFor(t, pt)
	PrepareForCreate(templates, pt)
	labelled := pt.DeepCopy()
	labelled.Labels = map[string]string{"a": "b"}
	changed := pt.DeepCopy()
	changed.Template.Spec.NodeName = "n"
	for _, tc := range []struct {
		name string
		obj  *corev1.PodTemplate
		want int64
	}{{"created", pt, 1}, {"labelled", labelled, 1}, {"template changed", changed, 2}} {
		if tc.obj != pt {
			PrepareForUpdate(templates, "", tc.obj, pt)
		}
		if tc.obj.Generation != tc.want {
			t.Errorf("%s PodTemplate: generation %d, want %d", tc.name, tc.obj.Generation, tc.want)
		}
	}
}
