package server

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// syncBuffer is a log destination tests read while the server writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// denyConfigMapCreates installs the ValidatingAdmissionPolicy no-cm and its
// binding, refusing every ConfigMap create with "no configmaps".
func denyConfigMapCreates(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	denyConfigMapCreatesWith(t, c, admissionregistrationv1.Validation{Expression: "false", Message: "no configmaps"})
}

// denyConfigMapCreatesWith is denyConfigMapCreates with validation.
func denyConfigMapCreatesWith(t *testing.T, c kubernetes.Interface, validation admissionregistrationv1.Validation) {
	t.Helper()
	deny := admissionregistrationv1.Deny
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "no-cm"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
			Validations: []admissionregistrationv1.Validation{validation}}}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "no-cm"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "no-cm",
			ValidationActions: []admissionregistrationv1.ValidationAction{deny}}}
	api := c.AdmissionregistrationV1()
	if _, err := api.ValidatingAdmissionPolicies().Create(t.Context(), policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.ValidatingAdmissionPolicyBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// The root CA publisher writes through admission, as
// kube-controller-manager's does: with a ValidatingAdmissionPolicy
// refusing ConfigMap creates, a new namespace gets no kube-root-ca.crt and
// the refusal is logged with the message kube-controller-manager 1.37.2
// logs; once the policy is gone the controller's retry publishes it.
func TestRootCAPublisherRefusedByPolicy(t *testing.T) {
	logs := &syncBuffer{}
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
	o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	_, admin := startWith(t, o)
	c := kubernetes.NewForConfigOrDie(admin)
	ctx := t.Context()

	denyConfigMapCreates(t, c)
	mustCreateNamespace(t, c, "guarded")
	// Recorded from kube-controller-manager 1.37.2 with the same policy.
	want := `configmaps \"kube-root-ca.crt\" is forbidden: ValidatingAdmissionPolicy 'no-cm' with binding 'no-cm' denied request: no configmaps`
	eventually(t, "the refusal is logged", func() (bool, string) {
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, "level=WARN") && strings.Contains(line, "namespace=guarded") && strings.Contains(line, want) {
				return true, ""
			}
		}
		return false, "no warning for namespace guarded with " + want
	})
	if _, err := c.CoreV1().ConfigMaps("guarded").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{}); err == nil {
		t.Fatal("kube-root-ca.crt was created despite the policy")
	}

	api := c.AdmissionregistrationV1()
	if err := api.ValidatingAdmissionPolicyBindings().Delete(ctx, "no-cm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := api.ValidatingAdmissionPolicies().Delete(ctx, "no-cm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	eventually(t, "kube-root-ca.crt once the policy is gone", func() (bool, string) {
		_, err := c.CoreV1().ConfigMaps("guarded").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	t.Logf("published %v after the policy was deleted", time.Since(start).Round(time.Millisecond))
}

// --controllers=*,-root-ca-certificate-publisher-controller: a new
// namespace gets its default ServiceAccount and no kube-root-ca.crt.
func TestControllersFlagDisablesRootCA(t *testing.T) {
	c := startWithControllers(t, "*", "-root-ca-certificate-publisher-controller")
	readyNamespace(t, c, "plain", nil)
	time.Sleep(500 * time.Millisecond)
	if _, err := c.CoreV1().ConfigMaps("plain").Get(t.Context(), "kube-root-ca.crt", metav1.GetOptions{}); err == nil {
		t.Error("kube-root-ca.crt published with its controller disabled")
	}
}

// An unknown controller name is refused at start with
// kube-controller-manager's message.
func TestControllersFlagUnknownName(t *testing.T) {
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
	o.Controllers = []string{"*", "-rootca"}
	s, err := Start(t.Context(), o)
	if err == nil {
		_ = s.Close()
	}
	if want := `"rootca" is not in the list of known controllers`; err == nil || err.Error() != want {
		t.Errorf("Start with --controllers=*,-rootca: %v, want %s", err, want)
	}
}

// Unreadable signing files stop the server at start, as they stop
// kube-controller-manager.
func TestCSRSigningFilesCheckedAtStart(t *testing.T) {
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
	o.Logger = slog.New(slog.DiscardHandler)
	o.CSRSigning = CSRSigningOptions{ClusterSigningCertFile: "/nonexistent/ca.crt", ClusterSigningKeyFile: "/nonexistent/ca.key"}
	s, err := Start(t.Context(), o)
	if err == nil {
		_ = s.Close()
	}
	if want := "starting the CSR signer: failed to init kubernetes.io/kubelet-serving certificate controller: error reading CA cert file"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Start with a missing --cluster-signing-cert-file: %v, want %s", err, want)
	}
}

// startWithControllers starts a server running the controllers the list
// selects (nil: all, quota included, as admitd serve by default).
func startWithControllers(t *testing.T, controllers ...string) kubernetes.Interface {
	t.Helper()
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	o.Quota = QuotaOptions{Controller: true, Resync: time.Hour}
	o.Controllers = controllers
	_, admin := startWith(t, o)
	return kubernetes.NewForConfigOrDie(admin)
}

// readyNamespace creates a namespace with labels and waits for its default
// ServiceAccount, without which ServiceAccount admission refuses pods.
func readyNamespace(t *testing.T, c kubernetes.Interface, name string, labels map[string]string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := c.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the default service account", func() (bool, string) {
		_, err := c.CoreV1().ServiceAccounts(name).Get(t.Context(), "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
}

// Each controller acts as its own service account in kube-system, as
// kube-controller-manager with --use-service-account-credentials: the
// accounts exist (kcm creates them), and a controller's request carries
// the account's uid and a credential id (what admission sees: here a
// policy's message shows them, for the root CA publisher's create); its
// writes' managedFields still name kube-controller-manager.
func TestControllersActAsTheirServiceAccounts(t *testing.T) {
	logs := &syncBuffer{}
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
	o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	_, admin := startWith(t, o)
	c := kubernetes.NewForConfigOrDie(admin)
	ctx := t.Context()
	uids := map[string]string{}
	for _, name := range []string{"root-ca-cert-publisher", "namespace-controller", "generic-garbage-collector",
		"replicaset-controller", "deployment-controller", "service-account-controller"} {
		// The controllers start beside the server, not before it
		// answers (as kube-controller-manager beside kube-apiserver).
		eventually(t, "service account kube-system/"+name, func() (bool, string) {
			sa, err := c.CoreV1().ServiceAccounts("kube-system").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			uids[name] = string(sa.UID)
			return true, ""
		})
	}

	denyConfigMapCreatesWith(t, c, admissionregistrationv1.Validation{Expression: "false",
		MessageExpression: `'uid=' + request.userInfo.uid + ' credential=' + request.userInfo.extra['authentication.kubernetes.io/credential-id'][0]`})
	mustCreateNamespace(t, c, "seen")
	want := "uid=" + uids["root-ca-cert-publisher"] + " credential=JTI="
	eventually(t, "the publisher's refusal naming its uid and credential", func() (bool, string) {
		return strings.Contains(logs.String(), want), "no log line with " + want
	})
	_ = c.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, "no-cm", metav1.DeleteOptions{})
	eventually(t, "kube-root-ca.crt once the policy is gone", func() (bool, string) {
		cm, err := c.CoreV1().ConfigMaps("seen").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if m := cm.ManagedFields; len(m) != 1 || m[0].Manager != "kube-controller-manager" {
			t.Fatalf("managedFields %+v, want one entry of kube-controller-manager", m)
		}
		return true, ""
	})
}
