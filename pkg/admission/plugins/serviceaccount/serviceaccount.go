// Package serviceaccount is the ServiceAccount admission plugin: a Pod
// created without a service account gets "default"; the account must exist;
// unless automounting is turned off, every init container and container
// mounts a projected kube-api-access-* volume (a bound token, the
// kube-root-ca.crt CA and the namespace); the account's image pull secrets
// are copied to a pod that has none; an account annotated
// kubernetes.io/enforce-mountable-secrets limits the secrets the pod (and
// the ephemeral containers added later) may use; and mirror pods may
// reference neither accounts nor secrets.
//
// It reads service accounts from the watch-fed cache, falling back to
// storage (retried for "default", which its controller creates moments after
// the namespace) as upstream falls back to a live GET. It creates no token
// and no ConfigMap: the token is projected by the kubelet, and kube-root-ca.crt
// is published by internal/controllers.
package serviceaccount

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

// Name is the upstream plugin name.
const Name = "ServiceAccount"

const (
	// DefaultServiceAccountName is the account of a pod that names none.
	DefaultServiceAccountName = "default"
	// EnforceMountableSecretsAnnotation, "true" on an account, limits its
	// pods to the secrets the account lists.
	EnforceMountableSecretsAnnotation = "kubernetes.io/enforce-mountable-secrets"
	// VolumeNamePrefix starts the name of the projected token volume.
	VolumeNamePrefix = "kube-api-access-"
	// TokenMountPath is where every container finds the token.
	TokenMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	// mirrorPodAnnotation marks the pods the kubelet mirrors from static
	// manifests.
	mirrorPodAnnotation = "kubernetes.io/config.mirror"
	// defaultLookupAttempts is how many times the default account is read
	// from storage before it is declared missing.
	defaultLookupAttempts = 10
)

var serviceAccountsGVR = corev1.SchemeGroupVersion.WithResource("serviceaccounts")

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		if pc.Cache == nil || pc.Objects == nil {
			return nil, fmt.Errorf("missing service account lookup")
		}
		return New(pc.Cache, pc.Objects), nil
	})
}

// Plugin is the ServiceAccount plugin.
type Plugin struct {
	accounts admission.ResourceCache
	objects  admission.ObjectLookup
	// volumeName returns the name of a new token volume.
	volumeName func() string
	// sleep waits between storage reads of a missing account; it returns
	// early with ctx's error.
	sleep func(ctx context.Context, d time.Duration) error
}

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
)

// New returns the plugin reading accounts from cache, and from objects when
// the cache does not have them.
func New(cache admission.ObjectCache, objects admission.ObjectLookup) *Plugin {
	return &Plugin{accounts: admission.CacheOf(cache, serviceAccountsGVR), objects: objects,
		volumeName: randomVolumeName,
		sleep:      sleepCtx}
}

// Handles CREATE and UPDATE.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// podOf returns the pod of a request the plugin looks at: a pod or its
// ephemeralcontainers subresource.
func podOf(a *admission.Attributes) (*corev1.Pod, bool) {
	if a.Resource.Group != "" || a.Resource.Resource != "pods" {
		return nil, false
	}
	if a.Subresource != "" && a.Subresource != "ephemeralcontainers" {
		return nil, false
	}
	pod, ok := a.Object.(*corev1.Pod)
	return pod, ok && pod != nil
}

func isMirrorPod(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[mirrorPodAnnotation]
	return ok
}

// Admit sets the account, mounts its token and copies its image pull
// secrets, on CREATE; then validates.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	pod, ok := podOf(a)
	if !ok || a.Operation != admission.Create {
		return nil
	}
	// the kubelet deletes a mirror pod whose spec differs from its
	// manifest: never mutate one.
	if isMirrorPod(pod) {
		return p.Validate(ctx, a)
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = DefaultServiceAccountName
		pod.Spec.DeprecatedServiceAccount = DefaultServiceAccountName //nolint:staticcheck // kept in step, as defaulting does
	}
	sa, err := p.serviceAccount(ctx, a.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %w", a.Namespace, pod.Spec.ServiceAccountName, err))
	}
	if automount(sa, pod) {
		mountToken(pod, p.volumeName)
	}
	if len(pod.Spec.ImagePullSecrets) == 0 {
		pod.Spec.ImagePullSecrets = make([]corev1.LocalObjectReference, len(sa.ImagePullSecrets))
		for i, s := range sa.ImagePullSecrets {
			pod.Spec.ImagePullSecrets[i].Name = s.Name
		}
	}
	// What Validate checks of a create, with the account just read.
	return checkMountableSecrets(a, sa, pod)
}

// checkMountableSecrets refuses a pod that references secrets an
// enforcing account does not list.
func checkMountableSecrets(a *admission.Attributes, sa *corev1.ServiceAccount, pod *corev1.Pod) error {
	if enforcesMountableSecrets(sa) {
		if err := checkSecretReferences(sa, pod); err != nil {
			return admission.NewForbidden(a, err)
		}
	}
	return nil
}

// Validate refuses pods whose account is missing, mirror pods that
// reference accounts or secrets, and references to secrets an enforcing
// account does not list.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	pod, ok := podOf(a)
	if !ok {
		return nil
	}
	if a.Operation == admission.Update && a.Subresource == "ephemeralcontainers" {
		return p.validateEphemeralContainers(ctx, a, pod)
	}
	if a.Operation != admission.Create {
		return nil
	}
	if isMirrorPod(pod) {
		return validateMirrorPod(a, pod)
	}
	if pod.Spec.ServiceAccountName == "" {
		return admission.NewForbidden(a, fmt.Errorf("no service account specified for pod %s/%s", a.Namespace, pod.Name))
	}
	sa, err := p.serviceAccount(ctx, a.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %w", a.Namespace, pod.Spec.ServiceAccountName, err))
	}
	return checkMountableSecrets(a, sa, pod)
}

// validateEphemeralContainers checks the ephemeral containers' secret
// references against an enforcing account.
func (p *Plugin) validateEphemeralContainers(ctx context.Context, a *admission.Attributes, pod *corev1.Pod) error {
	if pod.Spec.ServiceAccountName == "" {
		return admission.NewForbidden(a, fmt.Errorf("no service account specified for pod %s/%s", a.Namespace, pod.Name))
	}
	sa, err := p.serviceAccount(ctx, a.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %w", a.Namespace, pod.Spec.ServiceAccountName, err))
	}
	if !enforcesMountableSecrets(sa) {
		return nil
	}
	// upstream returns this refusal without a status: the client sees a
	// 500 carrying the text.
	return checkEphemeralSecretReferences(sa, pod)
}

// automount decides whether the token is mounted: the pod's choice, else
// the account's, else yes.
func automount(sa *corev1.ServiceAccount, pod *corev1.Pod) bool {
	if pod.Spec.AutomountServiceAccountToken != nil {
		return *pod.Spec.AutomountServiceAccountToken
	}
	if sa.AutomountServiceAccountToken != nil {
		return *sa.AutomountServiceAccountToken
	}
	return true
}

// enforcesMountableSecrets reports whether the account's annotation turns
// the mountable-secrets check on.
func enforcesMountableSecrets(sa *corev1.ServiceAccount) bool {
	v, ok := sa.Annotations[EnforceMountableSecretsAnnotation]
	if !ok {
		return false
	}
	on, _ := strconv.ParseBool(v)
	return on
}

// serviceAccount reads the account from the cache; when the cache does not
// have it, from storage: ten times, a short random while apart, for
// "default" (its controller may not have created it yet), once for others.
func (p *Plugin) serviceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	obj, err := p.accounts.Get(ctx, namespace, name)
	if err == nil {
		return asServiceAccount(obj)
	}
	if !apierrors.IsNotFound(err) {
		return nil, err
	}
	attempts := 1
	if name == DefaultServiceAccountName {
		attempts = defaultLookupAttempts
	}
	interval := time.Duration(100+rand.IntN(100)) * time.Millisecond
	for i := range attempts {
		if i > 0 {
			if err := p.sleep(ctx, interval); err != nil {
				return nil, err
			}
		}
		obj, err := p.objects.GetObject(ctx, serviceAccountsGVR, namespace, name)
		if err == nil {
			return asServiceAccount(obj)
		}
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "serviceaccount"}, name)
}

func asServiceAccount(obj runtime.Object) (*corev1.ServiceAccount, error) {
	sa, ok := obj.(*corev1.ServiceAccount)
	if !ok {
		return nil, fmt.Errorf("unexpected object of type %T", obj)
	}
	return sa, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
