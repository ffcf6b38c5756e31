package registry

// Expected values follow upstream kubernetes/kubernetes
// pkg/apis/core/v1/defaults.go, pkg/apis/apps/v1/defaults.go,
// pkg/apis/batch/v1/defaults.go and the +default markers of
// k8s.io/api v0.37.2 (core/v1/types.go).

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// defaultedPodSpec is what upstream makes of a PodSpec holding only c.
func defaultedPodSpec(c ...corev1.Container) corev1.PodSpec {
	return corev1.PodSpec{
		Containers:                    c,
		RestartPolicy:                 corev1.RestartPolicyAlways,
		TerminationGracePeriodSeconds: ptr.To[int64](30),
		DNSPolicy:                     corev1.DNSClusterFirst,
		SecurityContext:               &corev1.PodSecurityContext{},
		SchedulerName:                 corev1.DefaultSchedulerName,
	}
}

func defaultedContainer(name, image string, pull corev1.PullPolicy) corev1.Container {
	return corev1.Container{
		Name: name, Image: image, ImagePullPolicy: pull,
		TerminationMessagePath:   "/dev/termination-log",
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}
}

func TestDefaultPod(t *testing.T) {
	in := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.PodSpec{
			DeprecatedServiceAccount: "builder",
			Containers: []corev1.Container{{
				Name: "app", Image: "nginx",
				Ports:         []corev1.ContainerPort{{ContainerPort: 80}},
				Resources:     corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}},
				Env:           []corev1.EnvVar{{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
				LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}},
				Lifecycle:     &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}},
			}},
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox:1.36"}},
			Volumes: []corev1.Volume{
				{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
				{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}},
				{Name: "scratch"},
				{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log"}}},
				{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}},
			},
		},
	}

	app := defaultedContainer("app", "nginx", corev1.PullAlways)
	app.Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}}
	app.Resources = corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
	}
	app.Env = []corev1.EnvVar{{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}}
	app.LivenessProbe = &corev1.Probe{
		ProbeHandler:   corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80), Scheme: corev1.URISchemeHTTP}},
		TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
	}
	app.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80), Scheme: corev1.URISchemeHTTP}}}
	want := in.DeepCopy()
	want.Spec = defaultedPodSpec(app)
	want.Spec.InitContainers = []corev1.Container{defaultedContainer("init", "busybox:1.36", corev1.PullIfNotPresent)}
	want.Spec.EnableServiceLinks = ptr.To(true)
	want.Spec.ServiceAccountName, want.Spec.DeprecatedServiceAccount = "builder", "builder"
	want.Spec.Volumes = []corev1.Volume{
		{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, DefaultMode: ptr.To[int32](420)}}},
		{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: ptr.To[int32](420)}}},
		{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log", Type: ptr.To(corev1.HostPathUnset)}}},
		{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: ptr.To[int32](420), Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3600)}}}}}},
	}
	checkDefault(t, "Pod", in, want)
}

func TestDefaultPodHostNetwork(t *testing.T) {
	in := &corev1.Pod{Spec: corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{{Name: "a", Image: "x:1", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}}}}
	defaultPod(in)
	if got := in.Spec.Containers[0].Ports[0].HostPort; got != 8080 {
		t.Errorf("defaulted hostNetwork pod hostPort = %d, want 8080", got)
	}
}

// TestDefaultNodePodCIDRs: the singular podCIDR and the list agree, the
// singular one winning, as upstream's conversion of every Node it decodes.
func TestDefaultNodePodCIDRs(t *testing.T) {
	for _, tc := range []struct {
		cidr      string
		cidrs     []string
		wantCIDR  string
		wantCIDRs []string
	}{
		{"", nil, "", nil},
		{"10.0.0.0/24", nil, "10.0.0.0/24", []string{"10.0.0.0/24"}},
		{"", []string{"10.0.0.0/24", "fd00::/64"}, "10.0.0.0/24", []string{"10.0.0.0/24", "fd00::/64"}},
		{"10.0.0.0/24", []string{"10.0.0.0/24", "fd00::/64"}, "10.0.0.0/24", []string{"10.0.0.0/24", "fd00::/64"}},
		{"10.1.0.0/24", []string{"10.0.0.0/24", "fd00::/64"}, "10.1.0.0/24", []string{"10.1.0.0/24"}},
	} {
		node := &corev1.Node{Spec: corev1.NodeSpec{PodCIDR: tc.cidr, PodCIDRs: tc.cidrs}}
		defaultNode(node)
		if node.Spec.PodCIDR != tc.wantCIDR || !slices.Equal(node.Spec.PodCIDRs, tc.wantCIDRs) {
			t.Errorf("defaultNode(%q, %q) = %q, %q, want %q, %q", tc.cidr, tc.cidrs, node.Spec.PodCIDR, node.Spec.PodCIDRs, tc.wantCIDR, tc.wantCIDRs)
		}
	}
}

// TestDefaultPodStatusIPs: the singular pod IP and the list agree, the
// singular one winning, as upstream's PodStatus defaults.
func TestDefaultPodStatusIPs(t *testing.T) {
	ips := func(s ...string) []corev1.PodIP {
		var out []corev1.PodIP
		for _, ip := range s {
			out = append(out, corev1.PodIP{IP: ip})
		}
		return out
	}
	for _, tc := range []struct {
		ip      string
		ips     []corev1.PodIP
		wantIP  string
		wantIPs []corev1.PodIP
	}{
		{"", nil, "", nil},
		{"10.0.0.1", nil, "10.0.0.1", ips("10.0.0.1")},
		{"10.0.0.1", []corev1.PodIP{}, "10.0.0.1", ips("10.0.0.1")},
		{"", ips("10.0.0.1", "fd00::1"), "10.0.0.1", ips("10.0.0.1", "fd00::1")},
		{"10.0.0.2", ips("10.0.0.1", "fd00::1"), "10.0.0.2", ips("10.0.0.2")},
	} {
		pod := &corev1.Pod{Status: corev1.PodStatus{PodIP: tc.ip, PodIPs: tc.ips}}
		defaultPod(pod)
		if pod.Status.PodIP != tc.wantIP || !slices.Equal(pod.Status.PodIPs, tc.wantIPs) {
			t.Errorf("defaultPod(%q, %v) status = %q, %v, want %q, %v", tc.ip, tc.ips, pod.Status.PodIP, pod.Status.PodIPs, tc.wantIP, tc.wantIPs)
		}
	}
}

// TestDefaultPodNegativeGracePeriod: a Pod's negative grace period becomes
// one second; a template's is left for validation.
func TestDefaultPodNegativeGracePeriod(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](-5)}}
	defaultPod(pod)
	if got := *pod.Spec.TerminationGracePeriodSeconds; got != 1 {
		t.Errorf("defaulted pod grace period = %d, want 1", got)
	}
	tmpl := &corev1.PodTemplate{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](-5)}}}
	defaultPodTemplate(tmpl)
	if got := *tmpl.Template.Spec.TerminationGracePeriodSeconds; got != -5 {
		t.Errorf("defaulted template grace period = %d, want -5 (kept)", got)
	}
}

func TestDefaultPullPolicy(t *testing.T) {
	digest := "@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		image string
		want  corev1.PullPolicy
	}{
		{"nginx", corev1.PullAlways},
		{"nginx:latest", corev1.PullAlways},
		{"nginx:1.25", corev1.PullIfNotPresent},
		{"registry.k8s.io/pause:3.10", corev1.PullIfNotPresent},
		{"localhost:5000/team/app", corev1.PullAlways},
		{"localhost:5000/team/app:v2", corev1.PullIfNotPresent},
		{"nginx" + digest, corev1.PullIfNotPresent},
		{"nginx:latest" + digest, corev1.PullAlways},
		{"Nginx", corev1.PullIfNotPresent}, // unparseable: no tag
		{"", corev1.PullIfNotPresent},
	} {
		if got := defaultPullPolicy(tc.image); got != tc.want {
			t.Errorf("defaultPullPolicy(%q) = %s, want %s", tc.image, got, tc.want)
		}
	}
}

func TestDefaultService(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   corev1.ServiceSpec
		want corev1.ServiceSpec
	}{{
		name: "cluster IP",
		in:   corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}, {Port: 443, TargetPort: intstr.FromString("https")}}},
		want: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, SessionAffinity: corev1.ServiceAffinityNone,
			InternalTrafficPolicy: ptr.To(corev1.ServiceInternalTrafficPolicyCluster),
			Ports: []corev1.ServicePort{
				{Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)},
				{Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("https")},
			},
		},
	}, {
		name: "load balancer with client IP affinity",
		in:   corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, SessionAffinity: corev1.ServiceAffinityClientIP, Ports: []corev1.ServicePort{{Port: 53, Protocol: corev1.ProtocolUDP}}},
		want: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, SessionAffinity: corev1.ServiceAffinityClientIP,
			SessionAffinityConfig:         &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](10800)}},
			ExternalTrafficPolicy:         corev1.ServiceExternalTrafficPolicyCluster,
			InternalTrafficPolicy:         ptr.To(corev1.ServiceInternalTrafficPolicyCluster),
			AllocateLoadBalancerNodePorts: ptr.To(true),
			Ports:                         []corev1.ServicePort{{Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(53)}},
		},
	}, {
		name: "external name",
		in:   corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"},
		want: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com", SessionAffinity: corev1.ServiceAffinityNone},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			checkDefault(t, "Service", &corev1.Service{Spec: tc.in}, &corev1.Service{Spec: tc.want})
		})
	}
}

func TestDefaultCoreKinds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in, out runtime.Object
	}{{
		name: "Namespace",
		in:   &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}},
		out: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"kubernetes.io/metadata.name": "team-a"}},
			Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
	}, {
		name: "Secret",
		in:   &corev1.Secret{Data: map[string][]byte{"a": []byte("1")}, StringData: map[string]string{"a": "2", "b": "3"}},
		out:  &corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"a": []byte("2"), "b": []byte("3")}},
	}, {
		name: "Node",
		in: &corev1.Node{Spec: corev1.NodeSpec{PodCIDR: "10.0.0.0/24"},
			Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}},
		out: &corev1.Node{Spec: corev1.NodeSpec{PodCIDR: "10.0.0.0/24", PodCIDRs: []string{"10.0.0.0/24"}},
			Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}},
	}, {
		name: "ConfigMap",
		in:   &corev1.ConfigMap{},
		out:  &corev1.ConfigMap{Data: map[string]string{}},
	}, {
		name: "PersistentVolumeClaim",
		in:   &corev1.PersistentVolumeClaim{},
		out: &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem)},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}},
	}, {
		name: "ReplicationController",
		in: &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Template: &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}}},
		out: &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](1), Selector: map[string]string{"app": "web"},
				Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: defaultedPodSpec()}}},
	}} {
		t.Run(tc.name, func(t *testing.T) { checkDefault(t, tc.name, tc.in, tc.out) })
	}
}

func TestDefaultWorkloads(t *testing.T) {
	tmpl := func() corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.25"}}}}
	}
	// Templates get PodSpec defaults but not the Pod-only ones
	// (enableServiceLinks, requests from limits).
	wantTmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: defaultedPodSpec(defaultedContainer("web", "nginx:1.25", corev1.PullIfNotPresent))}
	pct25 := intstr.FromString("25%")
	for _, tc := range []struct {
		name    string
		in, out runtime.Object
	}{{
		name: "Deployment.apps",
		in:   &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: tmpl()}},
		out: &appsv1.Deployment{Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1), Template: wantTmpl, RevisionHistoryLimit: ptr.To[int32](10), ProgressDeadlineSeconds: ptr.To[int32](600),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &pct25, MaxSurge: &pct25}},
		}},
	}, {
		name: "ReplicaSet.apps",
		in:   &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Template: tmpl()}},
		out:  &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1), Template: wantTmpl}},
	}, {
		name: "DaemonSet.apps",
		in:   &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: tmpl()}},
		out: &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: wantTmpl, RevisionHistoryLimit: ptr.To[int32](10),
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: ptr.To(intstr.FromInt32(1)), MaxSurge: ptr.To(intstr.FromInt32(0))}}}},
	}, {
		name: "StatefulSet.apps",
		in: &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Template: tmpl(),
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}}},
		out: &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](1), Template: wantTmpl, RevisionHistoryLimit: ptr.To[int32](10),
			PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](0), MaxUnavailable: ptr.To(intstr.FromInt32(1))}},
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec:   corev1.PersistentVolumeClaimSpec{VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem)},
				Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}},
		}},
	}, {
		name: "Job.batch",
		in:   &batchv1.Job{Spec: batchv1.JobSpec{Template: tmpl()}},
		out: &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: batchv1.JobSpec{
			Template: wantTmpl, Completions: ptr.To[int32](1), Parallelism: ptr.To[int32](1), BackoffLimit: ptr.To[int32](6),
			CompletionMode: ptr.To(batchv1.NonIndexedCompletion), Suspend: ptr.To(false),
			PodReplacementPolicy: ptr.To(batchv1.TerminatingOrFailed), ManualSelector: ptr.To(false),
		}},
	}, {
		name: "CronJob.batch",
		in:   &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: tmpl()}}}},
		out: &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *", ConcurrencyPolicy: batchv1.AllowConcurrent,
			Suspend: ptr.To(false), SuccessfulJobsHistoryLimit: ptr.To[int32](3), FailedJobsHistoryLimit: ptr.To[int32](1),
			// SetDefaults_Job does not reach job templates.
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: wantTmpl}}}},
	}} {
		t.Run(tc.name, func(t *testing.T) { checkDefault(t, tc.name, tc.in, tc.out) })
	}
}

func TestDefaultJobVariants(t *testing.T) {
	job := &batchv1.Job{Spec: batchv1.JobSpec{
		Parallelism: ptr.To[int32](3), BackoffLimitPerIndex: ptr.To[int32](2),
		PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}}}}},
	}}
	defaultJob(job)
	if job.Spec.Completions != nil {
		t.Errorf("defaulted Job completions = %d, want unset when parallelism is set", *job.Spec.Completions)
	}
	if got := *job.Spec.BackoffLimit; got != 2147483647 {
		t.Errorf("defaulted Job backoffLimit = %d, want MaxInt32 with backoffLimitPerIndex", got)
	}
	if got := *job.Spec.PodReplacementPolicy; got != batchv1.Failed {
		t.Errorf("defaulted Job podReplacementPolicy = %s, want Failed with podFailurePolicy", got)
	}
	if got := job.Spec.PodFailurePolicy.Rules[0].OnPodConditions[0].Status; got != corev1.ConditionTrue {
		t.Errorf("defaulted onPodConditions status = %q, want True", got)
	}
}

// strategyOf returns the strategy of a built-in kind ("Pod", "Job.batch").
func strategyOf(kind string) (Strategy, bool) {
	for _, d := range builtinDescriptors() {
		if d.groupKind().String() == kind {
			return d.strategy, true
		}
	}
	return Strategy{}, false
}

// checkDefault runs the registered Default of kind on in and compares.
func checkDefault(t *testing.T, kind string, in, want runtime.Object) {
	t.Helper()
	s, ok := strategyOf(kind)
	if !ok || s.Default == nil {
		t.Fatalf("no Default registered for %s", kind)
	}
	s.Default(in)
	if !apiequality.Semantic.DeepEqual(in, want) {
		t.Errorf("defaulted %s differs from upstream's (-want +got):\n%s", kind, specDiff(want, in))
	}
}
