package podsecurity

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psapi "k8s.io/pod-security-admission/api"
	psmetrics "k8s.io/pod-security-admission/metrics"
	pspolicy "k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/admission"
)

// genPod makes a pod from r, varying every field a Pod Security check
// reads; most values are the compliant ones, so that many pods pass.
func genPod(r *rand.Rand) *corev1.Pod {
	pick := func(n int) int { return r.IntN(n) }
	rare := func() bool { return pick(12) == 0 }
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Annotations: map[string]string{"a": "b"}}}
	s := &p.Spec
	s.HostNetwork, s.HostPID, s.HostIPC = rare(), rare(), rare()
	if rare() {
		p.Annotations[corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix+"c0"] = []string{"runtime/default", "unconfined", "localhost/x"}[pick(3)]
	}
	if rare() {
		p.Annotations["seccomp.security.alpha.kubernetes.io/pod"] = "unconfined"
	}
	switch pick(6) {
	case 0:
		s.HostUsers = ptr.To(false)
	case 1:
		s.HostUsers = ptr.To(true)
	}
	switch pick(8) {
	case 0:
		s.OS = &corev1.PodOS{Name: corev1.Windows}
	case 1:
		s.OS = &corev1.PodOS{Name: corev1.Linux}
	}
	if pick(5) != 0 {
		s.SecurityContext = genPodSecurityContext(r, rare)
	}
	for range pick(3) {
		s.Volumes = append(s.Volumes, genVolume(r, rare))
	}
	for range 1 + pick(2) {
		s.Containers = append(s.Containers, genContainer(r, rare, len(s.Containers)))
	}
	if pick(3) == 0 {
		s.InitContainers = append(s.InitContainers, genContainer(r, rare, 10))
	}
	if rare() {
		s.EphemeralContainers = append(s.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon(genContainer(r, rare, 20))})
	}
	if pick(6) == 0 {
		s.RuntimeClassName = ptr.To([]string{"kata", "runc", ""}[pick(3)])
	}
	return p
}

func seccomp(r *rand.Rand) *corev1.SeccompProfile {
	types := []corev1.SeccompProfileType{"", corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeRuntimeDefault,
		corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeUnconfined}
	if t := types[r.IntN(len(types))]; t != "" {
		return &corev1.SeccompProfile{Type: t}
	}
	return nil
}

func triBool(r *rand.Rand, good bool) *bool {
	switch r.IntN(8) {
	case 0:
		return nil
	case 1:
		return ptr.To(!good)
	}
	return ptr.To(good)
}

func genPodSecurityContext(r *rand.Rand, rare func() bool) *corev1.PodSecurityContext {
	sc := &corev1.PodSecurityContext{RunAsNonRoot: triBool(r, true), SeccompProfile: seccomp(r)}
	if r.IntN(3) == 0 {
		sc.RunAsUser = ptr.To([]int64{0, 1000, 1000}[r.IntN(3)])
	}
	if rare() {
		sc.SELinuxOptions = &corev1.SELinuxOptions{Type: []string{"container_t", "spc_t"}[r.IntN(2)]}
	}
	if rare() {
		sc.Sysctls = []corev1.Sysctl{{Name: []string{"kernel.shm_rmid_forced", "kernel.msgmax"}[r.IntN(2)], Value: "1"}}
	}
	if rare() {
		sc.WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(r.IntN(2) == 0)}
	}
	if rare() {
		sc.AppArmorProfile = &corev1.AppArmorProfile{Type: []corev1.AppArmorProfileType{corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined}[r.IntN(2)]}
	}
	return sc
}

func genVolume(r *rand.Rand, rare func() bool) corev1.Volume {
	v := corev1.Volume{Name: fmt.Sprintf("v%d", r.IntN(100))}
	switch r.IntN(7) {
	case 0:
		v.HostPath = &corev1.HostPathVolumeSource{Path: "/"}
	case 1:
		v.NFS = &corev1.NFSVolumeSource{Server: "s", Path: "/"}
	case 2:
		v.ConfigMap = &corev1.ConfigMapVolumeSource{}
	case 3:
		v.Projected = &corev1.ProjectedVolumeSource{}
	case 4:
		v.Secret = &corev1.SecretVolumeSource{}
	case 5:
		v.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	if rare() {
		v.ConfigMap = &corev1.ConfigMapVolumeSource{}
	}
	return v
}

func genContainer(r *rand.Rand, rare func() bool, n int) corev1.Container {
	c := corev1.Container{Name: fmt.Sprintf("c%d", n), Image: "img"}
	if rare() {
		c.Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: int32(r.IntN(2) * 8080)}}
	}
	if rare() {
		c.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: []string{"", "evil"}[r.IntN(2)]}}}
	}
	if rare() {
		c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Host: []string{"", "evil"}[r.IntN(2)]}}}
	}
	if r.IntN(8) == 0 {
		return c
	}
	sc := &corev1.SecurityContext{AllowPrivilegeEscalation: triBool(r, false), RunAsNonRoot: triBool(r, true), SeccompProfile: seccomp(r)}
	if rare() {
		sc.Privileged = ptr.To(r.IntN(2) == 0)
	}
	switch r.IntN(6) {
	case 0:
	case 1:
		sc.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"NET_RAW"}}
	case 2:
		sc.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{[]corev1.Capability{"NET_BIND_SERVICE", "CHOWN", "SYS_ADMIN"}[r.IntN(3)]}}
	default:
		sc.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
	}
	if r.IntN(4) == 0 {
		sc.RunAsUser = ptr.To([]int64{0, 1000}[r.IntN(2)])
	}
	if rare() {
		sc.ProcMount = ptr.To([]corev1.ProcMountType{corev1.DefaultProcMount, corev1.UnmaskedProcMount}[r.IntN(2)])
	}
	if rare() {
		sc.SELinuxOptions = &corev1.SELinuxOptions{User: "root"}
	}
	if rare() {
		sc.WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(true)}
	}
	if rare() {
		sc.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
	}
	c.SecurityContext = sc
	return c
}

// TestPassesImpliesLibraryAllows: whenever passes says a generated pod
// passes a level, the library's evaluator allows it at that level; and
// passes is not vacuous (it lets through a good share of those the library
// allows).
func TestPassesImpliesLibraryAllows(t *testing.T) {
	evaluator, err := pspolicy.NewEvaluator(pspolicy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	levels := []psapi.LevelVersion{
		{Level: psapi.LevelBaseline, Version: psapi.LatestVersion()},
		{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()},
		{Level: psapi.LevelRestricted, Version: psapi.MajorMinorVersion(1, 37)},
		{Level: psapi.LevelPrivileged, Version: psapi.LatestVersion()},
	}
	allowed, fast := map[psapi.Level]int{}, map[psapi.Level]int{}
	for i := range 20000 {
		p := genPod(r)
		for _, lv := range levels {
			lib := pspolicy.AggregateCheckResults(evaluator.EvaluatePod(lv, &p.ObjectMeta, &p.Spec))
			ours := passes(lv, &p.ObjectMeta, &p.Spec)
			if ours && !lib.Allowed {
				t.Fatalf("pod %d at %s: passes() = true, library refuses: %s\n%+v", i, lv, lib.ForbiddenDetail(), p.Spec)
			}
			if lib.Allowed && lv.Version.Latest() {
				allowed[lv.Level]++
				if ours {
					fast[lv.Level]++
				}
			}
		}
	}
	for _, l := range []psapi.Level{psapi.LevelBaseline, psapi.LevelRestricted} {
		t.Logf("%s: library allows %d, passes() %d", l, allowed[l], fast[l])
		if fast[l] < allowed[l]/4 || allowed[l] < 300 {
			t.Errorf("%s: passes() admits %d of the %d pods the library allows; the generator or passes() is off", l, fast[l], allowed[l])
		}
	}
}

// recorded logs the metrics calls of the library's recorder interface.
type recorded struct{ log []string }

func (m *recorded) RecordEvaluation(d psmetrics.Decision, lv psapi.LevelVersion, mode psmetrics.Mode, a psapi.Attributes) {
	m.log = append(m.log, fmt.Sprintf("eval %s %s %s %s", d, lv, mode, a.GetResource()))
}
func (m *recorded) RecordExemption(a psapi.Attributes) { m.log = append(m.log, "exempt "+a.GetName()) }
func (m *recorded) RecordError(fatal bool, a psapi.Attributes) {
	m.log = append(m.log, fmt.Sprintf("error %v %s", fatal, a.GetName()))
}

// TestFastPathAgreesWithLibrary: Validate (fast path first) and the
// library alone give the same error, warnings, audit annotations and
// metrics for generated pods in namespaces of every kind of label, with
// exemptions configured.
func TestFastPathAgreesWithLibrary(t *testing.T) {
	c := newCluster(
		ns("plain"),
		ns("pinnedprivileged", "enforce", "privileged", "enforce-version", "v1.20"),
		ns("base", "enforce", "baseline"),
		ns("pinned", "enforce", "baseline", "enforce-version", "v1.30"),
		ns("warn", "warn", "restricted"),
		ns("audit", "audit", "restricted", "audit-version", "v1.25"),
		ns("restricted", "enforce", "restricted"),
		ns("restrictedaudit", "enforce", "restricted", "audit", "baseline", "warn", "baseline"),
		ns("latest", "enforce", "restricted", "enforce-version", "latest"),
		ns("bad", "enforce", "bogus"),
		ns("badversion", "enforce", "restricted", "enforce-version", "v1"),
		ns("exempt", "enforce", "restricted"),
	)
	names := make([]string, 0, len(c.namespaces)+1)
	for n := range c.namespaces {
		names = append(names, n)
	}
	names = append(names, "missing")
	config := `apiVersion: pod-security.admission.config.k8s.io/v1
kind: PodSecurityConfiguration
defaults:
  audit: baseline
exemptions:
  usernames: [admin]
  runtimeClasses: [kata]
  namespaces: [exempt]
`
	var fastRec, libRec recorded
	fastPlugin := mustPluginRecording(t, c, config, &fastRec)
	libPlugin := mustPluginRecording(t, c, config, &libRec)
	r := rand.New(rand.NewPCG(3, 4))
	admittedRestricted := 0
	for i := range 6000 {
		p := genPod(r)
		p.Namespace = names[r.IntN(len(names))]
		user := []string{"alice", "alice", "admin"}[r.IntN(3)]
		op := []admission.Operation{admission.Create, admission.Create, admission.Update}[r.IntN(3)]
		got := runOne(fastPlugin.Validate, p, user, op)
		want := runOne(libPlugin.validateWithLibrary, p, user, op)
		if got != want || !reflect.DeepEqual(fastRec.log, libRec.log) {
			t.Fatalf("pod %d in %s by %s (%s):\nfast path: %s %v\nlibrary:   %s %v", i, p.Namespace, user, op, got, fastRec.log, want, libRec.log)
		}
		if strings.HasPrefix(got, "err=<nil>") && strings.Contains(got, "restricted:latest") {
			admittedRestricted++
		}
		fastRec.log, libRec.log = fastRec.log[:0], libRec.log[:0]
	}
	if admittedRestricted < 100 {
		t.Errorf("only %d pods admitted under restricted:latest: the comparison hardly covers the fast path", admittedRestricted)
	}
}

func mustPluginRecording(t *testing.T, c *cluster, config string, rec psmetrics.Recorder) *Plugin {
	t.Helper()
	p := mustPlugin(t, c, config)
	p.delegate.Metrics = rec
	return p
}

// runOne validates p and describes the outcome: error, warnings,
// annotations.
func runOne(validate func(context.Context, *admission.Attributes) error, p *corev1.Pod, user string, op admission.Operation) string {
	a := &admission.Attributes{Name: p.Name, Namespace: p.Namespace, Resource: podsGVR, Kind: corev1.SchemeGroupVersion.WithKind("Pod"),
		Operation: op, Object: p, UserInfo: authenticationv1.UserInfo{Username: user}, Record: admission.NewRecord()}
	if op == admission.Update {
		old := p.DeepCopy()
		old.Spec.Containers[0].Image = "other"
		a.OldObject = old
	}
	err := validate(context.Background(), a)
	return fmt.Sprintf("err=%v warnings=%q annotations=%v", err, a.Record.Warnings(), a.Record.Annotations(admission.LevelRequestResponse))
}
