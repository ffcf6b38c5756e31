package registry

// Expected messages follow upstream kubernetes/kubernetes
// pkg/apis/core/validation/validation.go, pkg/apis/apps/validation,
// pkg/apis/batch/validation and the strategies in pkg/registry (selector
// immutability, Job selector generation). Strings are as
// field.ErrorList.ToAggregate().Error() prints them.

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

var testCatalogue = NewCatalogue()

// resourceFor finds the served resource of obj's kind.
func resourceFor(t *testing.T, obj runtime.Object) *Resource {
	t.Helper()
	kinds, _, err := Scheme().ObjectKinds(obj)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := testCatalogue.LookupKind(kinds[0])
	if !ok {
		t.Fatalf("no resource serves %v", kinds[0])
	}
	return r
}

// createErrors runs obj through what the server does before storing a new
// object: defaulting, system fields (namespace, uid), then PrepareCreate.
func createErrors(t *testing.T, obj runtime.Object) field.ErrorList {
	t.Helper()
	r := resourceFor(t, obj)
	m, _ := meta.Accessor(obj)
	if r.Namespaced && m.GetNamespace() == "" {
		m.SetNamespace("default")
	}
	m.SetUID("0b6d5f0e-uid")
	r.Default(obj)
	return PrepareCreate(r, obj)
}

// updateErrors runs an update of old (already created) into obj:
// defaulting, then PrepareUpdate.
func updateErrors(t *testing.T, obj, old runtime.Object) field.ErrorList {
	t.Helper()
	r := resourceFor(t, obj)
	r.Default(obj)
	return PrepareUpdate(r, obj, old)
}

func aggregate(errs field.ErrorList) string {
	if agg := errs.ToAggregate(); agg != nil {
		return agg.Error()
	}
	return ""
}

func meta1(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default", ResourceVersion: "1"}
}

func podSpec(containers ...corev1.Container) corev1.PodSpec {
	return corev1.PodSpec{Containers: containers}
}

func ctr(name, image string) corev1.Container { return corev1.Container{Name: name, Image: image} }

func webTemplate(labels map[string]string, restart corev1.RestartPolicy) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{RestartPolicy: restart, Containers: []corev1.Container{ctr("web", "nginx:1.25")}}}
}

var webLabels = map[string]string{"app": "web"}

const dns1123LabelMsg = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"

// TestUpstreamErrorString pins the exact text upstream returns for a Pod
// without containers and with an unknown restart policy.
func TestUpstreamErrorString(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: meta1("web"), Spec: corev1.PodSpec{RestartPolicy: "Sometimes"}}
	got := aggregate(createErrors(t, pod))
	want := `[spec.containers: Required value, spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"]`
	if got != want {
		t.Errorf("create Pod errors =\n%s\nwant\n%s", got, want)
	}
}

func TestValidateCreate(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  runtime.Object
		want string // "" means valid
	}{
		{"valid Pod", &corev1.Pod{ObjectMeta: meta1("web"), Spec: podSpec(ctr("web", "nginx"))}, ""},
		{"Pod container name and image", &corev1.Pod{ObjectMeta: meta1("web"), Spec: podSpec(ctr("Web", ""))},
			`[spec.containers[0].name: Invalid value: "Web": ` + dns1123LabelMsg + `, spec.containers[0].image: Required value]`},
		{"Pod duplicate container", &corev1.Pod{ObjectMeta: meta1("web"), Spec: podSpec(ctr("app", "a:1"), ctr("app", "b:1"))},
			`spec.containers[1].name: Duplicate value: "app"`},
		{"Pod port range", &corev1.Pod{ObjectMeta: meta1("web"), Spec: podSpec(corev1.Container{Name: "a", Image: "a:1", Ports: []corev1.ContainerPort{{ContainerPort: 70000}}})},
			`spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive`},
		{"Pod volume mount not found", &corev1.Pod{ObjectMeta: meta1("web"), Spec: podSpec(corev1.Container{Name: "a", Image: "a:1", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}})},
			`spec.containers[0].volumeMounts[0].name: Not found: "data"`},
		{"Pod name", &corev1.Pod{ObjectMeta: meta1("Web_1"), Spec: podSpec(ctr("a", "a:1"))},
			`metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"valid Service", &corev1.Service{ObjectMeta: meta1("web"), Spec: corev1.ServiceSpec{Selector: webLabels, Ports: []corev1.ServicePort{{Port: 80}}}}, ""},
		{"Service without ports", &corev1.Service{ObjectMeta: meta1("web"), Spec: corev1.ServiceSpec{Selector: webLabels}}, `spec.ports: Required value`},
		{"Service DNS-1035 name", &corev1.Service{ObjectMeta: meta1("1web"), Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}},
			`metadata.name: Invalid value: "1web": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`},
		{"Service protocol and port", &corev1.Service{ObjectMeta: meta1("web"), Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 0, Protocol: "HTTP"}}}},
			`[spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive, spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP", spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive]`}, // targetPort defaults to port
		{"Service duplicate port", &corev1.Service{ObjectMeta: meta1("web"), Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "b", Port: 80}}}},
			`spec.ports[1]: Duplicate value: {"Name":"","Protocol":"TCP","AppProtocol":null,"Port":80,"TargetPort":0,"NodePort":0}`},
		{"ConfigMap key", &corev1.ConfigMap{ObjectMeta: meta1("cfg"), Data: map[string]string{"a b": "x"}},
			`data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`},
		{"ConfigMap size", &corev1.ConfigMap{ObjectMeta: meta1("cfg"), Data: map[string]string{"big": strings.Repeat("x", corev1.MaxSecretSize+1)}},
			`[]: Too long: may not be more than 1048576 bytes`}, // upstream reports on field.NewPath("")
		{"Secret type data", &corev1.Secret{ObjectMeta: meta1("tls"), Type: corev1.SecretTypeTLS},
			`[data[tls.crt]: Required value, data[tls.key]: Required value]`},
		{"Namespace name", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team.a"}},
			`metadata.name: Invalid value: "team.a": must not contain dots`},
		{"finalizer name", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Finalizers: []string{"cleanup"}}},
			`metadata.finalizers[0]: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified`},
		{"valid Deployment", &appsv1.Deployment{ObjectMeta: meta1("web"), Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: webLabels}, Template: webTemplate(webLabels, "")}}, ""},
		{"Deployment selector mismatch", &appsv1.Deployment{ObjectMeta: meta1("web"), Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}, Template: webTemplate(webLabels, "")}},
			"spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`"},
		{"Deployment without selector", &appsv1.Deployment{ObjectMeta: meta1("web"), Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](-1), Template: webTemplate(webLabels, "")}},
			"[spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.selector: Required value, spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`]"},
		{"ReplicaSet restart policy", &appsv1.ReplicaSet{ObjectMeta: meta1("web"), Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: webLabels}, Template: webTemplate(webLabels, corev1.RestartPolicyNever)}},
			`spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"`},
		{"DaemonSet empty selector", &appsv1.DaemonSet{ObjectMeta: meta1("agent"), Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{}, Template: webTemplate(webLabels, "")}},
			`spec.selector: Invalid value: {}: empty selector is invalid for daemonset`},
		{"valid StatefulSet", &appsv1.StatefulSet{ObjectMeta: meta1("db"), Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: webLabels}, Template: webTemplate(webLabels, "")}}, ""},
		{"valid Job", &batchv1.Job{ObjectMeta: meta1("pi"), Spec: batchv1.JobSpec{Template: webTemplate(nil, corev1.RestartPolicyNever)}}, ""},
		{"Job restart policy", &batchv1.Job{ObjectMeta: meta1("pi"), Spec: batchv1.JobSpec{Template: webTemplate(nil, "")}},
			`spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`},
		{"valid CronJob", &batchv1.CronJob{ObjectMeta: meta1("tick"), Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *",
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: webTemplate(nil, corev1.RestartPolicyOnFailure)}}}}, ""},
		{"CronJob schedule", &batchv1.CronJob{ObjectMeta: meta1("tick"), Spec: batchv1.CronJobSpec{Schedule: "every minute",
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: webTemplate(nil, corev1.RestartPolicyOnFailure)}}}},
			`spec.schedule: Invalid value: "every minute": expected exactly 5 fields, found 2: [every minute]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(createErrors(t, tc.obj)); got != tc.want {
				t.Errorf("create errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	deploy := func(sel map[string]string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: meta1("web"), Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: webTemplate(map[string]string{"app": "web", "tier": "api"}, "")}}
	}
	immutable := &corev1.ConfigMap{ObjectMeta: meta1("cfg"), Immutable: ptr.To(true), Data: map[string]string{"a": "1"}}
	for _, tc := range []struct {
		name       string
		old, obj   runtime.Object
		want       string
		wantPrefix bool
	}{
		{name: "immutable ConfigMap data", old: immutable,
			obj:  &corev1.ConfigMap{ObjectMeta: meta1("cfg"), Immutable: ptr.To(true), Data: map[string]string{"a": "2"}},
			want: "data: Forbidden: field is immutable when `immutable` is set"},
		{name: "Secret type", old: &corev1.Secret{ObjectMeta: meta1("s"), Type: corev1.SecretTypeOpaque},
			obj:  &corev1.Secret{ObjectMeta: meta1("s"), Type: "example.com/custom"},
			want: `type: Invalid value: "example.com/custom": field is immutable`},
		{name: "Deployment selector", old: deploy(webLabels), obj: deploy(map[string]string{"tier": "api"}),
			want: `spec.selector: Invalid value: {"matchLabels":{"tier":"api"}}: field is immutable`},
		{name: "Pod restart policy", old: createdPod(corev1.RestartPolicyAlways), obj: createdPod(corev1.RestartPolicyNever), wantPrefix: true,
			want: "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"},
		{name: "Pod add container", old: createdPod(corev1.RestartPolicyAlways), obj: withSidecar(createdPod(corev1.RestartPolicyAlways)),
			want: "spec.containers: Forbidden: pod updates may not add or remove containers"},
		{name: "Pod image", old: createdPod(corev1.RestartPolicyAlways), obj: withImage(createdPod(corev1.RestartPolicyAlways), "nginx:1.27")},
		{name: "name", old: &corev1.ConfigMap{ObjectMeta: meta1("a")}, obj: &corev1.ConfigMap{ObjectMeta: meta1("b")},
			want: `metadata.name: Invalid value: "b": field is immutable`},
		{name: "StatefulSet serviceName",
			old:  &appsv1.StatefulSet{ObjectMeta: meta1("db"), Spec: appsv1.StatefulSetSpec{ServiceName: "db", Selector: &metav1.LabelSelector{MatchLabels: webLabels}, Template: webTemplate(webLabels, "")}},
			obj:  &appsv1.StatefulSet{ObjectMeta: meta1("db"), Spec: appsv1.StatefulSetSpec{ServiceName: "db2", Selector: &metav1.LabelSelector{MatchLabels: webLabels}, Template: webTemplate(webLabels, "")}},
			want: "spec: Forbidden: " + statefulSetUpdateForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resourceFor(t, tc.old).Default(tc.old)
			got := aggregate(updateErrors(t, tc.obj, tc.old))
			if (tc.wantPrefix && !strings.HasPrefix(got, tc.want)) || (!tc.wantPrefix && got != tc.want) {
				t.Errorf("update errors =\n%s\nwant (prefix=%v)\n%s", got, tc.wantPrefix, tc.want)
			}
		})
	}
}

// createdPod is a pod as stored after create.
func createdPod(restart corev1.RestartPolicy) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: meta1("web"), Spec: corev1.PodSpec{RestartPolicy: restart, Containers: []corev1.Container{ctr("web", "nginx:1.25")}}}
	defaultPod(pod)
	preparePodForCreate(pod)
	return pod
}

func withSidecar(pod *corev1.Pod) *corev1.Pod {
	pod.Spec.Containers = append(pod.Spec.Containers, ctr("log", "busybox:1.36"))
	return pod
}

func withImage(pod *corev1.Pod, image string) *corev1.Pod {
	pod.Spec.Containers[0].Image = image
	return pod
}

func TestJobGeneratedSelectorConflict(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: meta1("pi"), Spec: batchv1.JobSpec{
		Template: webTemplate(map[string]string{"controller-uid": "someone-else"}, corev1.RestartPolicyNever)}}
	got := aggregate(createErrors(t, job))
	want := `spec.template.metadata.labels[controller-uid]: Invalid value: {"batch.kubernetes.io/controller-uid":"0b6d5f0e-uid","batch.kubernetes.io/job-name":"pi","controller-uid":"someone-else","job-name":"pi"}: must be '0b6d5f0e-uid'`
	if !strings.HasPrefix(got, want) {
		t.Errorf("create Job errors =\n%s\nwant prefix\n%s", got, want)
	}
}

func TestNameRule(t *testing.T) {
	for _, tc := range []struct {
		kind, name string
		valid      bool
	}{
		{"Service", "web-1", true}, {"Service", "1web", false},
		{"Namespace", "team-a", true}, {"Namespace", "team.a", false},
		{"StatefulSet.apps", "db.primary", false}, {"Deployment.apps", "web.v2", true},
		{"ClusterRole.rbac.authorization.k8s.io", "system:controller:foo", true},
		{"ClusterRole.rbac.authorization.k8s.io", "a/b", false},
	} {
		gk := schemaGroupKind(tc.kind)
		if got := len(NameRule(gk)(tc.name, false)) == 0; got != tc.valid {
			t.Errorf("NameRule(%s)(%q) valid = %v, want %v", tc.kind, tc.name, got, tc.valid)
		}
	}
}

func schemaGroupKind(s string) schema.GroupKind { return schema.ParseGroupKind(s) }
