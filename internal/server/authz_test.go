package server

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/admitd/admitd/internal/auth/rbac/bootstrap"
)

// startRBAC starts a server with the default authorization (Node,RBAC) and
// returns it with the admin's config (system:masters).
func startRBAC(t *testing.T) (*Server, *rest.Config) {
	t.Helper()
	return startWith(t, testOptions(t))
}

// testOptions are serve's defaults on memory storage, a free port and a
// temporary directory, logging nothing.
func testOptions(t *testing.T) Options {
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return o
}

// startWith starts a server with o and returns it with an admin client
// configuration.
func startWith(t *testing.T, o Options) (*Server, *rest.Config) {
	t.Helper()
	s, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, &rest.Config{Host: s.URL, QPS: -1, TLSClientConfig: rest.TLSClientConfig{
		CAData: s.CAPEM, CertData: s.AdminCertPEM, KeyData: s.AdminKeyPEM}}
}

// as is a client of the admin impersonating user (in no group but
// system:authenticated, which the server adds).
func as(t *testing.T, admin *rest.Config, user string) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return kubernetes.NewForConfigOrDie(cfg)
}

func mustCreateNamespace(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func bindClusterRole(t *testing.T, c kubernetes.Interface, ns, name, role, user string) {
	t.Helper()
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
	if _, err := c.RbacV1().RoleBindings(ns).Create(t.Context(), rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// A binding is in force when its create returns, and gone when its delete
// returns: the RBAC cache reloads before the write answers.
func TestRBACWriteEffectiveBeforeItReturns(t *testing.T) {
	_, admin := startRBAC(t)
	c := kubernetes.NewForConfigOrDie(admin)
	mustCreateNamespace(t, c, "x")
	carol := as(t, admin, "carol")
	_, err := carol.CoreV1().ConfigMaps("x").Create(t.Context(), configMap("before"), metav1.CreateOptions{})
	want := `configmaps is forbidden: User "carol" cannot create resource "configmaps" in API group "" in the namespace "x"`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("carol creating before the binding: %v, want %q", err, want)
	}
	for i := range 5 {
		bindClusterRole(t, c, "x", "carol-edit", "edit", "carol")
		if _, err := carol.CoreV1().ConfigMaps("x").Create(t.Context(), configMap("cm"), metav1.CreateOptions{}); err != nil {
			t.Fatalf("round %d: carol creating right after the binding: %v", i, err)
		}
		if err := c.RbacV1().RoleBindings("x").Delete(t.Context(), "carol-edit", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := carol.CoreV1().ConfigMaps("x").Delete(t.Context(), "cm", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
			t.Fatalf("round %d: carol deleting right after the unbinding: %v, want Forbidden", i, err)
		}
		if err := c.CoreV1().ConfigMaps("x").Delete(t.Context(), "cm", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// A user who may write roles cannot grant what they do not hold, with
// upstream's message; what they hold they may grant.
func TestRBACEscalationPrevented(t *testing.T) {
	_, admin := startRBAC(t)
	c := kubernetes.NewForConfigOrDie(admin)
	mustCreateNamespace(t, c, "x")
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "role-writer"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles", "rolebindings"}, Verbs: []string{"create", "update"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
	}}
	if _, err := c.RbacV1().Roles("x").Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "dave"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "role-writer"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "dave"}}}
	if _, err := c.RbacV1().RoleBindings("x").Create(t.Context(), rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dave := as(t, admin, "dave")
	held := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "held"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}}
	if _, err := dave.RbacV1().Roles("x").Create(t.Context(), held, metav1.CreateOptions{}); err != nil {
		t.Errorf("dave granting what he holds: %v", err)
	}
	more := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "more"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}}
	_, err := dave.RbacV1().Roles("x").Create(t.Context(), more, metav1.CreateOptions{})
	want := `roles.rbac.authorization.k8s.io "more" is forbidden: user "dave" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` +
		"\n" + `{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("dave granting secrets: %v, want %q", err, want)
	}
	admBinding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "dave-admin"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "dave"}}}
	if _, err := dave.RbacV1().RoleBindings("x").Create(t.Context(), admBinding, metav1.CreateOptions{}); !apierrors.IsForbidden(err) ||
		!strings.Contains(err.Error(), "is attempting to grant RBAC permissions not currently held") {
		t.Errorf("dave binding admin to himself: %v, want Forbidden for escalation", err)
	}
}

// Every ClusterRole and ClusterRoleBinding of the bootstrap policy exists
// at start, the aggregated ones with their rules gathered.
func TestBootstrapPolicyReconciled(t *testing.T) {
	_, admin := startRBAC(t)
	c := kubernetes.NewForConfigOrDie(admin)
	p, err := bootstrap.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range p.ClusterRoles {
		got, err := c.RbacV1().ClusterRoles().Get(t.Context(), want.Name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("bootstrap ClusterRole %s: %v", want.Name, err)
			continue
		}
		if want.AggregationRule != nil && len(got.Rules) == 0 && want.Name != "system:aggregate-to-admin" {
			t.Errorf("aggregated ClusterRole %s has no rules", want.Name)
		}
	}
	for _, want := range p.ClusterRoleBindings {
		if _, err := c.RbacV1().ClusterRoleBindings().Get(t.Context(), want.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("bootstrap ClusterRoleBinding %s: %v", want.Name, err)
		}
	}
	for _, want := range p.RoleBindings {
		if _, err := c.RbacV1().RoleBindings(want.Namespace).Get(t.Context(), want.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("bootstrap RoleBinding %s/%s: %v", want.Namespace, want.Name, err)
		}
	}
}

// A ClusterRole with an aggregationRule gets the rules of the roles its
// selector picks, and follows their changes.
func TestClusterRoleAggregation(t *testing.T) {
	_, admin := startRBAC(t)
	c := kubernetes.NewForConfigOrDie(admin)
	agg := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "agg"}, AggregationRule: &rbacv1.AggregationRule{
		ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"to": "agg"}}}}}
	if _, err := c.RbacV1().ClusterRoles().Create(t.Context(), agg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rule := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get"}}
	part := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "part", Labels: map[string]string{"to": "agg"}},
		Rules: []rbacv1.PolicyRule{rule}}
	if _, err := c.RbacV1().ClusterRoles().Create(t.Context(), part, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForRules(t, c, "agg", 1)
	if got := aggregationFields(t, c, "agg"); got != `{"f:rules":{}}` {
		t.Errorf("the controller's managed fields = %q, want a forced apply of the rules, as upstream's", got)
	}
	if err := c.RbacV1().ClusterRoles().Delete(t.Context(), "part", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForRules(t, c, "agg", 0)
	if got := aggregationFields(t, c, "agg"); got != "" {
		t.Errorf("the controller still manages %q after an apply without rules", got)
	}
}

// aggregationFields are the fields clusterrole-aggregation-controller
// applied to the ClusterRole name ("" when it has no Apply entry).
func aggregationFields(t *testing.T, c kubernetes.Interface, name string) string {
	t.Helper()
	role, err := c.RbacV1().ClusterRoles().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range role.ManagedFields {
		if e.Manager == "clusterrole-aggregation-controller" && e.Operation == metav1.ManagedFieldsOperationApply && e.FieldsV1 != nil {
			return string(e.FieldsV1.Raw)
		}
	}
	return ""
}

func waitForRules(t *testing.T, c kubernetes.Interface, name string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := c.RbacV1().ClusterRoles().Get(t.Context(), name, metav1.GetOptions{})
		if err == nil && len(got.Rules) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ClusterRole %s: %v, rules %v; want %d rules", name, err, got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// CEL's authorizer in a ValidatingAdmissionPolicy asks the server's chain.
func TestCELAuthorizerAsksRBAC(t *testing.T) {
	_, admin := startRBAC(t)
	c := kubernetes.NewForConfigOrDie(admin)
	mustCreateNamespace(t, c, "x")
	fail := admissionregistrationv1.Fail
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "may-read-secrets"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{"CREATE"},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "authorizer.group('').resource('secrets').namespace('x').check('get').allowed()",
				Message:    "only readers of secrets"}}}}
	if _, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(t.Context(), policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "may-read-secrets"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "may-read-secrets",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}
	if _, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// erin may create configmaps but not read secrets; frank may do both.
	cmWriter := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "cm-writer"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}}}}
	if _, err := c.RbacV1().ClusterRoles().Create(t.Context(), cmWriter, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bindClusterRole(t, c, "x", "erin", "cm-writer", "erin")
	bindClusterRole(t, c, "x", "frank", "edit", "frank")
	_, err := as(t, admin, "erin").CoreV1().ConfigMaps("x").Create(t.Context(), configMap("e"), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "only readers of secrets") {
		t.Errorf("erin's create: %v, want the policy's denial", err)
	}
	if _, err := as(t, admin, "frank").CoreV1().ConfigMaps("x").Create(t.Context(), configMap("f"), metav1.CreateOptions{}); err != nil {
		t.Errorf("frank's create: %v", err)
	}
}

// Decisions of the RBAC authorizer are counted as upstream counts them.
func TestAuthorizationDecisionMetrics(t *testing.T) {
	s, admin := startRBAC(t)
	c := kubernetes.NewForConfigOrDie(admin)
	mustCreateNamespace(t, c, "x")
	bindClusterRole(t, c, "x", "gina", "view", "gina")
	if _, err := as(t, admin, "gina").CoreV1().ConfigMaps("x").List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `apiserver_authorization_decisions_total{decision="allowed",name="rbac",type="RBAC"}`
	if body := scrape(t, s, admin); !strings.Contains(body, want) {
		t.Errorf("/metrics lacks %s", want)
	}
}

// A restart gives a bootstrap role back the rules it lost, unless it is
// annotated autoupdate=false.
func TestBootstrapPolicyReconciledOnRestart(t *testing.T) {
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.KubeconfigOut = t.TempDir(), 0, "-"
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	restart := func(edit func(*rbacv1.ClusterRole)) *rbacv1.ClusterRole {
		s, err := Start(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		c := kubernetes.NewForConfigOrDie(&rest.Config{Host: s.URL, TLSClientConfig: rest.TLSClientConfig{
			CAData: s.CAPEM, CertData: s.AdminCertPEM, KeyData: s.AdminKeyPEM}})
		role, err := c.RbacV1().ClusterRoles().Get(t.Context(), "system:discovery", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			edited := role.DeepCopy()
			edit(edited)
			if _, err := c.RbacV1().ClusterRoles().Update(t.Context(), edited, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		return role // as found at start, before edit
	}
	restart(func(r *rbacv1.ClusterRole) { r.Rules = nil })
	if got := restart(func(r *rbacv1.ClusterRole) {
		r.Rules = nil
		r.Annotations[rbacv1.AutoUpdateAnnotationKey] = "false"
	}); len(got.Rules) == 0 {
		t.Errorf("system:discovery after a restart has no rules, want them restored")
	}
	if got := restart(nil); len(got.Rules) != 0 {
		t.Errorf("system:discovery with autoupdate=false after a restart has rules %v, want none", got.Rules)
	}
}
