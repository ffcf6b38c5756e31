package serviceaccount

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

// accounts is the cluster the plugin reads: cached holds what the watch
// cache has, stored what storage has (reads counted); err fails every
// read.
type accounts struct {
	cached, stored map[string]*corev1.ServiceAccount
	storedReads    int
	err            error
}

func (s *accounts) GetCachedObject(_ context.Context, gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
	if s.err != nil {
		return nil, s.err
	}
	if sa, ok := s.cached[ns+"/"+name]; ok {
		return sa, nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (s *accounts) ListCachedObjects(context.Context, schema.GroupVersionResource, string, labels.Selector) ([]runtime.Object, error) {
	return nil, errors.New("not used")
}

func (s *accounts) GetObject(_ context.Context, gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
	s.storedReads++
	if sa, ok := s.stored[ns+"/"+name]; ok {
		return sa, nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func newPlugin(s *accounts) *Plugin {
	p := New(s, s)
	p.volumeName = func() string { return "kube-api-access-abcde" }
	p.sleep = func(context.Context, time.Duration) error { return nil }
	return p
}

func sa(name string, edit ...func(*corev1.ServiceAccount)) *corev1.ServiceAccount {
	s := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "myns"}}
	for _, e := range edit {
		e(s)
	}
	return s
}

func cachedAccounts(sas ...*corev1.ServiceAccount) *accounts {
	s := &accounts{cached: map[string]*corev1.ServiceAccount{}, stored: map[string]*corev1.ServiceAccount{}}
	for _, a := range sas {
		s.cached[a.Namespace+"/"+a.Name] = a
		s.stored[a.Namespace+"/"+a.Name] = a
	}
	return s
}

func pod(edit ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "myname", Namespace: "myns"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	for _, e := range edit {
		e(p)
	}
	return p
}

func tokenVolume(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Projected: TokenVolumeSource()}}
}

func tokenMount(name string) corev1.VolumeMount {
	return corev1.VolumeMount{Name: name, ReadOnly: true, MountPath: TokenMountPath}
}

var (
	mirror       = func(p *corev1.Pod) { p.Annotations = map[string]string{"kubernetes.io/config.mirror": "x"} }
	noAutomount  = func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = ptr(false) }
	yesAutomount = func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = ptr(true) }
	enforcing    = func(s *corev1.ServiceAccount) {
		s.Annotations = map[string]string{EnforceMountableSecretsAnnotation: "true"}
		s.Secrets = []corev1.ObjectReference{{Name: "allowed"}}
		s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull-allowed"}}
	}
)

func ptr[T any](v T) *T { return &v }

func saName(name string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.ServiceAccountName, p.Spec.DeprecatedServiceAccount = name, name }
}

func secretVolume(secret string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "v-" + secret,
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}})
	}
}

func envSecret(init bool, secret string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		env := corev1.EnvVar{Name: "E", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "k"}}}
		if init {
			p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: "i", Env: []corev1.EnvVar{env}})
			return
		}
		p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, env)
	}
}

func envFromSecret(secret string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].EnvFrom = append(p.Spec.Containers[0].EnvFrom, corev1.EnvFromSource{
			SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: secret}}})
	}
}

func pullSecret(name string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.ImagePullSecrets = append(p.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: name})
	}
}

// mounted is the pod the plugin makes of pod(edit...) with the default
// account: account set, token volume mounted in every container.
func mounted(edit ...func(*corev1.Pod)) *corev1.Pod {
	p := pod(edit...)
	if p.Spec.ServiceAccountName == "" {
		saName("default")(p)
	}
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			cs[i].VolumeMounts = append(cs[i].VolumeMounts, tokenMount("kube-api-access-abcde"))
		}
	}
	p.Spec.Volumes = append(p.Spec.Volumes, tokenVolume("kube-api-access-abcde"))
	return p
}

const forbidden = `pods "myname" is forbidden: `

func TestAdmitCreate(t *testing.T) {
	def := cachedAccounts(sa("default"))
	customMount := corev1.VolumeMount{Name: "my-custom-mount", MountPath: TokenMountPath}
	withCustomMount := func(p *corev1.Pod) { p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{customMount} }
	init := func(p *corev1.Pod) { p.Spec.InitContainers = []corev1.Container{{Name: "i"}} }
	existing := func(p *corev1.Pod) { p.Spec.Volumes = []corev1.Volume{{Name: "kube-api-access-zzzzz"}} }
	tests := []struct {
		name     string
		accounts *accounts
		pod      *corev1.Pod
		want     *corev1.Pod
		wantErr  string
	}{
		{name: "default account and token", accounts: def, pod: pod(), want: mounted()},
		{name: "init containers mount too", accounts: def, pod: pod(init), want: mounted(init)},
		{name: "a mount at the token path is respected, no volume added", accounts: def,
			pod: pod(withCustomMount), want: pod(withCustomMount, saName("default"))},
		{name: "an existing kube-api-access volume is reused", accounts: def, pod: pod(existing),
			want: pod(existing, saName("default"), func(p *corev1.Pod) {
				p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{tokenMount("kube-api-access-zzzzz")}
			})},
		{name: "pod turns automount off", accounts: def, pod: pod(noAutomount), want: pod(noAutomount, saName("default"))},
		{name: "account turns automount off", accounts: cachedAccounts(sa("default", func(s *corev1.ServiceAccount) { s.AutomountServiceAccountToken = ptr(false) })),
			pod: pod(), want: pod(saName("default"))},
		{name: "pod's choice wins over the account's",
			accounts: cachedAccounts(sa("default", func(s *corev1.ServiceAccount) { s.AutomountServiceAccountToken = ptr(false) })),
			pod:      pod(yesAutomount), want: mounted(yesAutomount)},
		{name: "image pull secrets copied", accounts: cachedAccounts(sa("default", func(s *corev1.ServiceAccount) {
			s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "foo"}, {Name: "bar"}}
		})), pod: pod(noAutomount), want: pod(noAutomount, saName("default"), pullSecret("foo"), pullSecret("bar"))},
		{name: "the pod's own image pull secrets are kept", accounts: cachedAccounts(sa("default", func(s *corev1.ServiceAccount) {
			s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "foo"}}
		})), pod: pod(noAutomount, pullSecret("mine")), want: pod(noAutomount, saName("default"), pullSecret("mine"))},
		{name: "named account", accounts: cachedAccounts(sa("robot")), pod: pod(saName("robot")), want: mounted(saName("robot"))},
		{name: "missing default account", accounts: cachedAccounts(), pod: pod(),
			wantErr: forbidden + `error looking up service account myns/default: serviceaccount "default" not found`},
		{name: "missing named account", accounts: def, pod: pod(saName("robot")),
			wantErr: forbidden + `error looking up service account myns/robot: serviceaccount "robot" not found`},
		{name: "cache failure", accounts: &accounts{err: errors.New("boom")}, pod: pod(),
			wantErr: forbidden + `error looking up service account myns/default: boom`},
		{name: "mirror pod is not mutated", accounts: cachedAccounts(), pod: pod(mirror), want: pod(mirror)},
		{name: "mirror pod with an account", accounts: def, pod: pod(mirror, saName("default")),
			wantErr: forbidden + "a mirror pod may not reference service accounts"},
		{name: "mirror pod with a secret volume", accounts: def, pod: pod(mirror, secretVolume("s")),
			wantErr: forbidden + "a mirror pod may not reference secrets"},
		{name: "mirror pod with a secret env", accounts: def, pod: pod(mirror, envSecret(true, "s")),
			wantErr: forbidden + "a mirror pod may not reference secrets"},
		{name: "mirror pod with a pull secret", accounts: def, pod: pod(mirror, pullSecret("s")),
			wantErr: forbidden + "a mirror pod may not reference secrets"},
		{name: "mirror pod with a token projection", accounts: def, pod: pod(mirror, func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{tokenVolume("t")}
		}), wantErr: forbidden + "a mirror pod may not use ServiceAccountToken volume projections"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlugin(tc.accounts)
			obj := tc.pod.DeepCopy()
			a := admissiontest.Create(obj).Attributes()
			err := p.Admit(context.Background(), a)
			checkErr(t, err, tc.wantErr)
			if tc.want == nil {
				return
			}
			if !equality.Semantic.DeepEqual(obj, tc.want) {
				t.Fatalf("Admit: pod = %#v\nwant %#v", obj.Spec, tc.want.Spec)
			}
			// a second run (reinvocation) changes nothing
			again := obj.DeepCopy()
			if err := p.Admit(context.Background(), admissiontest.Create(again).Attributes()); err != nil {
				t.Fatalf("second Admit = %v", err)
			}
			if !equality.Semantic.DeepEqual(obj, again) {
				t.Errorf("second Admit changed the pod: %#v\nwant %#v", again.Spec, obj.Spec)
			}
		})
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("error = %v, want none", err)
	case want != "" && err == nil:
		t.Fatalf("admitted, want error %q", want)
	case want != "" && err.Error() != want:
		t.Fatalf("error = %q, want %q", err, want)
	}
	if strings.HasPrefix(want, forbidden) && !apierrors.IsForbidden(err) {
		t.Errorf("error %v is not Forbidden", err)
	}
}

func TestMountableSecrets(t *testing.T) {
	strict := cachedAccounts(sa("default", enforcing))
	tests := []struct {
		name     string
		accounts *accounts
		pod      *corev1.Pod
		wantErr  string
	}{
		{name: "referenced secrets", accounts: strict, pod: pod(noAutomount, secretVolume("allowed"), envSecret(true, "allowed"),
			envSecret(false, "allowed"), envFromSecret("allowed"), pullSecret("pull-allowed"))},
		{name: "secret volume", accounts: strict, pod: pod(noAutomount, secretVolume("other")),
			wantErr: forbidden + `volume with secret.secretName="other" is not allowed because service account default does not reference that secret`},
		{name: "init container env", accounts: strict, pod: pod(noAutomount, envSecret(true, "other")),
			wantErr: forbidden + `init container i with envVar E referencing secret.secretName="other" is not allowed because service account default does not reference that secret`},
		{name: "container env", accounts: strict, pod: pod(noAutomount, envSecret(false, "other")),
			wantErr: forbidden + `container c with envVar E referencing secret.secretName="other" is not allowed because service account default does not reference that secret`},
		{name: "container envFrom", accounts: strict, pod: pod(noAutomount, envFromSecret("other")),
			wantErr: forbidden + `container c with envFrom referencing secret.secretName="other" is not allowed because service account default does not reference that secret`},
		{name: "image pull secret", accounts: strict, pod: pod(noAutomount, pullSecret("pull-allowed"), pullSecret("x")),
			wantErr: forbidden + `imagePullSecrets[1].name="x" is not allowed because service account default does not reference that imagePullSecret`},
		{name: "volumes are checked first", accounts: strict, pod: pod(noAutomount, envSecret(false, "e"), secretVolume("v")),
			wantErr: forbidden + `volume with secret.secretName="v" is not allowed because service account default does not reference that secret`},
		{name: "annotation false", accounts: cachedAccounts(sa("default", enforcing, func(s *corev1.ServiceAccount) {
			s.Annotations[EnforceMountableSecretsAnnotation] = "false"
		})), pod: pod(noAutomount, secretVolume("other"))},
		{name: "annotation unparsable", accounts: cachedAccounts(sa("default", enforcing, func(s *corev1.ServiceAccount) {
			s.Annotations[EnforceMountableSecretsAnnotation] = "yes"
		})), pod: pod(noAutomount, secretVolume("other"))},
		{name: "no annotation", accounts: cachedAccounts(sa("default")), pod: pod(noAutomount, secretVolume("other"))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := admissiontest.Create(tc.pod.DeepCopy()).Attributes()
			checkErr(t, newPlugin(tc.accounts).Admit(context.Background(), a), tc.wantErr)
		})
	}
}

// The ephemeral containers added to a pod are checked against an
// enforcing account, without a status (upstream returns the plain error);
// they get no token mount.
func TestEphemeralContainers(t *testing.T) {
	ephemeral := func(secret string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debug", EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: secret}}}}}}}
		}
	}
	tests := []struct {
		name     string
		accounts *accounts
		pod      *corev1.Pod
		wantErr  string
		wantCode int32
	}{
		{name: "allowed", accounts: cachedAccounts(sa("default", enforcing)), pod: pod(saName("default"), ephemeral("allowed"))},
		{name: "not enforcing", accounts: cachedAccounts(sa("default")), pod: pod(saName("default"), ephemeral("other"))},
		{name: "refused", accounts: cachedAccounts(sa("default", enforcing)), pod: pod(saName("default"), ephemeral("other")),
			wantErr: `ephemeral container debug with envFrom referencing secret.secretName="other" is not allowed because service account default does not reference that secret`},
		{name: "no account", accounts: cachedAccounts(), pod: pod(ephemeral("other")),
			wantErr: forbidden + "no service account specified for pod myns/myname", wantCode: http.StatusForbidden},
		{name: "missing account", accounts: cachedAccounts(), pod: pod(saName("robot"), ephemeral("other")),
			wantErr: forbidden + `error looking up service account myns/robot: serviceaccount "robot" not found`, wantCode: http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := tc.pod.DeepCopy()
			a := admissiontest.Update(obj, tc.pod).Resource(corev1.SchemeGroupVersion.WithResource("pods"), "ephemeralcontainers").Attributes()
			p := newPlugin(tc.accounts)
			if err := p.Admit(context.Background(), a); err != nil {
				t.Fatalf("Admit = %v, want no error (it only acts on CREATE)", err)
			}
			if !equality.Semantic.DeepEqual(obj, tc.pod) {
				t.Errorf("Admit changed the pod on UPDATE")
			}
			checkErr(t, p.Validate(context.Background(), a), tc.wantErr)
		})
	}
}

func TestIgnored(t *testing.T) {
	p := newPlugin(cachedAccounts())
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "myns"}}
	podsGVR := corev1.SchemeGroupVersion.WithResource("pods")
	for name, a := range map[string]*admission.Attributes{
		"update":          admissiontest.Update(pod(), pod()).Attributes(),
		"other resource":  admissiontest.Create(pod()).Resource(corev1.SchemeGroupVersion.WithResource("secrets"), "").Attributes(),
		"status":          admissiontest.Create(pod()).Resource(podsGVR, "status").Attributes(),
		"not a pod":       admissiontest.Create(sec).Resource(podsGVR, "").Attributes(),
		"nil object":      admissiontest.Delete(pod()).Attributes(),
		"other api group": admissiontest.Create(pod()).Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "pods"}, "").Attributes(),
	} {
		before := a.Object
		if before != nil {
			before = before.DeepCopyObject()
		}
		if err := p.Admit(context.Background(), a); err != nil {
			t.Errorf("%s: Admit = %v, want nil", name, err)
		}
		if err := p.Validate(context.Background(), a); err != nil {
			t.Errorf("%s: Validate = %v, want nil", name, err)
		}
		if !equality.Semantic.DeepEqual(a.Object, before) {
			t.Errorf("%s: Admit changed the object", name)
		}
	}
}

// A service account missing from the cache is read from storage: ten
// times for "default", once for another.
func TestStorageFallback(t *testing.T) {
	s := cachedAccounts()
	p := newPlugin(s)
	err := p.Admit(context.Background(), admissiontest.Create(pod()).Attributes())
	if err == nil || s.storedReads != defaultLookupAttempts {
		t.Errorf("missing default: err %v after %d storage reads, want an error after %d", err, s.storedReads, defaultLookupAttempts)
	}
	s.storedReads = 0
	_ = p.Admit(context.Background(), admissiontest.Create(pod(saName("robot"))).Attributes())
	if s.storedReads != 1 {
		t.Errorf("missing robot: %d storage reads, want 1", s.storedReads)
	}
	s.stored["myns/default"] = sa("default")
	s.storedReads = 0
	obj := pod()
	if err := p.Admit(context.Background(), admissiontest.Create(obj).Attributes()); err != nil {
		t.Fatalf("default only in storage: Admit = %v", err)
	}
	if !equality.Semantic.DeepEqual(obj, mounted()) {
		t.Errorf("default only in storage: pod = %#v", obj.Spec)
	}
}

// The retries of a missing default account end with the request.
func TestStorageFallbackEndsWithRequest(t *testing.T) {
	p := New(cachedAccounts(), cachedAccounts())
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := p.Admit(ctx, admissiontest.Create(pod()).Attributes())
	if !apierrors.IsForbidden(err) || !strings.HasSuffix(err.Error(), context.DeadlineExceeded.Error()) {
		t.Errorf("Admit = %v, want Forbidden naming the deadline", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Admit took %v after its context ended", d)
	}
}

func TestRandomVolumeName(t *testing.T) {
	obj := pod()
	if err := New(cachedAccounts(sa("default")), cachedAccounts()).Admit(context.Background(), admissiontest.Create(obj).Attributes()); err != nil {
		t.Fatal(err)
	}
	name := obj.Spec.Volumes[0].Name
	if rest, ok := strings.CutPrefix(name, VolumeNamePrefix); !ok || len(rest) != 5 {
		t.Errorf("volume name %q, want %s and 5 characters", name, VolumeNamePrefix)
	}
	if m := obj.Spec.Containers[0].VolumeMounts[0].Name; m != name {
		t.Errorf("mount of %q, want %q", m, name)
	}
}

// BenchmarkAdmitCreate is the common pod create: default account, token
// mounted in two containers.
func BenchmarkAdmitCreate(b *testing.B) {
	p := New(cachedAccounts(sa("default")), cachedAccounts())
	in := pod(func(p *corev1.Pod) { p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "d"}) })
	b.ReportAllocs()
	for b.Loop() {
		a := admissiontest.Create(in.DeepCopy()).Attributes()
		if err := p.Admit(context.Background(), a); err != nil {
			b.Fatal(err)
		}
		if err := p.Validate(context.Background(), a); err != nil {
			b.Fatal(err)
		}
	}
}
