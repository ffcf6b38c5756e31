package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestTracesBoundedByBytes: a server whose traces may hold 4 MiB keeps
// only the newest traces of creates whose mutating policy changed a
// ~900 KiB ConfigMap (each trace holds the object before and after), not
// the 300 its count allows.
func TestTracesBoundedByBytes(t *testing.T) {
	o := testOptions(t)
	o.AdmissionTraceBytes = 4 << 20
	s, admin := startWith(t, o)
	cs := kubernetes.NewForConfigOrDie(admin)
	ctx := t.Context()
	rule := admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}
	policy := &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "label"},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints:   &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule}},
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
			Mutations: []admissionregistrationv1.Mutation{{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: `Object{metadata: Object.metadata{labels: {"seen": "yes"}}}`}}}}}
	if _, err := cs.AdmissionregistrationV1().MutatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "label"},
		Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "label"}}
	if _, err := cs.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for { // until the policy applies
		probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", Namespace: "default"}}
		got, err := cs.CoreV1().ConfigMaps("default").Create(ctx, probe, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Labels["seen"] == "yes" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the policy never applied")
		}
		time.Sleep(50 * time.Millisecond)
	}
	big := strings.Repeat("x", 900<<10)
	for i := range 8 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("big-%d", i), Namespace: "default"}, Data: map[string]string{"d": big}}
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	code, body := getCode(t, httpClient(t, s, true), s, "/admission/traces?resource=configmaps")
	if code != http.StatusOK {
		t.Fatalf("GET traces = %d %s", code, body)
	}
	var list struct {
		Items []struct {
			Request struct{ Name, Verb string }
			Steps   []struct{ Outcome string }
		}
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	var creates []string
	for _, it := range list.Items {
		if it.Request.Verb == "create" && strings.HasPrefix(it.Request.Name, "big-") {
			creates = append(creates, it.Request.Name)
		}
	}
	// Two traces of ~1.8 MiB each fit in 4 MiB; the third pushes out the oldest.
	if len(creates) == 0 || len(creates) > 2 || creates[0] != "big-7" {
		t.Errorf("traces of big creates kept: %v; want at most 2, the newest (big-7) first", creates)
	}
}

// A request a controller sends is traced with the controller named: the
// root CA publisher's ConfigMap in a new namespace says
// kube-controller-manager (root-ca-cert-publisher), a user's own request
// names no client.
func TestTraceNamesTheController(t *testing.T) {
	s, admin := startWith(t, testOptions(t))
	cs := kubernetes.NewForConfigOrDie(admin)
	mustCreateNamespace(t, cs, "traced")
	eventually(t, "the root CA publisher's ConfigMap", func() (bool, string) {
		_, err := cs.CoreV1().ConfigMaps("traced").Get(t.Context(), "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	code, body := getCode(t, httpClient(t, s, true), s, "/admission/traces?resource=configmaps&namespace=traced")
	if code != http.StatusOK {
		t.Fatalf("GET traces = %d %s", code, body)
	}
	var list struct {
		Items []struct {
			Request struct{ User, Client, Name string }
		}
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, it := range list.Items {
		if it.Request.Name == "kube-root-ca.crt" {
			found = true
			if want := "kube-controller-manager (root-ca-cert-publisher)"; it.Request.Client != want {
				t.Errorf("trace of %s by %s: client %q, want %q", it.Request.Name, it.Request.User, it.Request.Client, want)
			}
		}
	}
	if !found {
		t.Fatalf("no trace of kube-root-ca.crt's create in %s", body)
	}
	code, body = getCode(t, httpClient(t, s, true), s, "/admission/traces?resource=namespaces")
	if code != http.StatusOK || !strings.Contains(body, `"name":"traced"`) || strings.Contains(body, `"client"`) {
		t.Errorf("the user's namespace create: %d %s; want its trace without a client", code, body)
	}
}
