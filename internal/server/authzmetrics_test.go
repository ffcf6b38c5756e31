package server

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

// remoteAuthorizer starts an HTTPS remote authorizer on 127.0.0.1 answering
// with h, and writes the kubeconfig file that reaches it.
func remoteAuthorizer(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	srv := webhooktest.Start(t, h)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: srv.URL, CertificateAuthorityData: srv.CABundle()}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c"}
	kc.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "kc")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// allowing answers every SubjectAccessReview with allowed.
func allowing(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
		"status": map[string]any{"allowed": true}})
}

// webhookEntry is an authorizers entry for a v1 webhook named name.
func webhookEntry(name, kubeconfig, policy, matchConditions string) string {
	return `- type: Webhook
  name: ` + name + `
  webhook:
    timeout: 2s
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: ` + policy + `
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: ` + kubeconfig + `}
` + matchConditions
}

func configHash(data string) string { return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(data))) }

// reloadSeries is the reload metrics in the exposition format; the
// timestamps are checked apart.
func reloadSeries(success, failure int, applied string) string {
	s := `# HELP apiserver_authorization_config_controller_automatic_reloads_total [BETA] Total number of automatic reloads of authorization configuration split by status and apiserver identity.
# TYPE apiserver_authorization_config_controller_automatic_reloads_total counter
`
	if failure > 0 {
		s += fmt.Sprintf("apiserver_authorization_config_controller_automatic_reloads_total{apiserver_id_hash=\"\",status=\"failure\"} %d\n", failure)
	}
	if success > 0 {
		s += fmt.Sprintf("apiserver_authorization_config_controller_automatic_reloads_total{apiserver_id_hash=\"\",status=\"success\"} %d\n", success)
	}
	if success+failure == 0 {
		s = ""
	}
	return s + `# HELP apiserver_authorization_config_controller_last_config_info [ALPHA] Information about the last applied authorization configuration with hash as label, split by apiserver identity.
# TYPE apiserver_authorization_config_controller_last_config_info gauge
apiserver_authorization_config_controller_last_config_info{apiserver_id_hash="",hash="` + configHash(applied) + `"} 1
`
}

// Reloads are counted as upstream: the first load is not a reload; an
// unchanged file or configuration is not counted; new invalid content is
// one failure however often it is read; an unreadable file is a failure
// each time.
func TestAuthorizationConfigReloadMetrics(t *testing.T) {
	path := filepath.Join(t.TempDir(), "authz.yaml")
	deny := authzConfig("- {type: AlwaysDeny, name: nope}\n")
	allow := authzConfig("- {type: AlwaysAllow, name: allow-all}\n")
	writeAuthzConfig(t, path, deny)
	reg := prometheus.NewRegistry()
	c, err := newConfiguredAuthorizer(path, modeAuthorizers{}, reg, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"apiserver_authorization_config_controller_automatic_reloads_total",
		"apiserver_authorization_config_controller_last_config_info"}
	steps := []struct {
		name             string
		write            string // "" writes nothing, "-" removes the file
		success, failure int
		applied          string
	}{
		{"started", "", 0, 0, deny},
		{"unchanged", "", 0, 0, deny},
		{"changed", allow, 1, 0, allow},
		{"invalid", authzConfig("- {type: Bogus, name: x}\n"), 1, 1, allow},
		{"invalid read again", "", 1, 1, allow},
		{"same configuration, other bytes", allow + "# a comment\n", 1, 1, allow},
		{"removed", "-", 1, 2, allow},
		{"still removed", "", 1, 3, allow},
		{"back", deny, 2, 3, deny},
	}
	for i, st := range steps {
		switch st.write {
		case "":
		case "-":
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		default:
			writeAuthzConfig(t, path, st.write)
		}
		if i > 0 {
			c.reload()
		}
		if err := testutil.GatherAndCompare(reg, strings.NewReader(reloadSeries(st.success, st.failure, st.applied)), names...); err != nil {
			t.Errorf("after %s: %v", st.name, err)
		}
	}
	stamps, err := testutil.GatherAndCount(reg, "apiserver_authorization_config_controller_automatic_reload_last_timestamp_seconds")
	if err != nil || stamps != 2 {
		t.Errorf("automatic_reload_last_timestamp_seconds: %d series, %v; want success and failure", stamps, err)
	}
	for _, status := range []string{"success", "failure"} {
		if v := testutil.ToFloat64(c.reloads.timestamp.WithLabelValues(status, "")); v < 1e9 {
			t.Errorf("automatic_reload_last_timestamp_seconds{status=%q} = %v, want the time of the last reload", status, v)
		}
	}
}

// A configured webhook's series carry its name from the file; a reloaded
// chain records into the same series.
func TestConfiguredWebhookMetrics(t *testing.T) {
	failing := remoteAuthorizer(t, func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", http.StatusForbidden) })
	path := filepath.Join(t.TempDir(), "authz.yaml")
	writeAuthzConfig(t, path, authzConfig(webhookEntry("remote", failing, "NoOpinion", "")+"- {type: AlwaysAllow, name: allow}\n"))
	reg := prometheus.NewRegistry()
	c, err := newConfiguredAuthorizer(path, modeAuthorizers{}, reg, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	decide(t, c)
	writeAuthzConfig(t, path, authzConfig(webhookEntry("remote", failing, "NoOpinion",
		"    matchConditions:\n    - expression: request.user == 'alice'\n")+"- {type: AlwaysAllow, name: allow}\n"))
	c.reload()
	decide(t, c) // bob is excluded
	want := `# HELP apiserver_authorization_webhook_evaluations_fail_open_total [ALPHA] NoOpinion results due to webhook timeout or error.
# TYPE apiserver_authorization_webhook_evaluations_fail_open_total counter
apiserver_authorization_webhook_evaluations_fail_open_total{name="remote",result="error"} 1
# HELP apiserver_authorization_webhook_evaluations_total [ALPHA] Round-trips to authorization webhooks.
# TYPE apiserver_authorization_webhook_evaluations_total counter
apiserver_authorization_webhook_evaluations_total{name="remote",result="error"} 1
# HELP apiserver_authorization_match_condition_exclusions_total [ALPHA] Total number of exclusions when an authorization webhook is skipped because match conditions exclude it.
# TYPE apiserver_authorization_match_condition_exclusions_total counter
apiserver_authorization_match_condition_exclusions_total{name="remote",type="Webhook"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "apiserver_authorization_webhook_evaluations_total",
		"apiserver_authorization_webhook_evaluations_fail_open_total", "apiserver_authorization_match_condition_exclusions_total"); err != nil {
		t.Error(err)
	}
}

// --authorization-mode=Webhook's series are named "default", as
// kube-apiserver names that authorizer.
func TestWebhookModeMetrics(t *testing.T) {
	o := DefaultAuthorizationWebhookOptions()
	o.ConfigFile = remoteAuthorizer(t, allowing)
	reg := prometheus.NewRegistry()
	a, err := o.authorizer([]string{"Webhook"}, reg)
	if err != nil {
		t.Fatal(err)
	}
	decide(t, a)
	want := `# HELP apiserver_authorization_webhook_evaluations_total [ALPHA] Round-trips to authorization webhooks.
# TYPE apiserver_authorization_webhook_evaluations_total counter
apiserver_authorization_webhook_evaluations_total{name="default",result="success"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "apiserver_authorization_webhook_evaluations_total"); err != nil {
		t.Error(err)
	}
}

// The whole server serves the authorization metrics on /metrics.
func TestAuthorizationMetricsServed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "authz.yaml")
	data := authzConfig(webhookEntry("remote", remoteAuthorizer(t, allowing), "Deny",
		"    matchConditions:\n    - expression: request.user == 'alice'\n") + "- {type: RBAC, name: rbac}\n")
	writeAuthzConfig(t, path, data)
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
	o.Logger, o.AuthorizationConfigFile = quietLogger(), path
	s, admin := startWith(t, o)
	if _, err := as(t, admin, "alice").CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Errorf("alice, allowed by the webhook: %v", err)
	}
	if _, err := as(t, admin, "bob").CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("bob, excluded from the webhook, with no RBAC grant: %v, want 403", err)
	}
	wantMetrics(t, s, admin,
		`apiserver_authorization_webhook_evaluations_total{name="remote",result="success"} 1`,
		`apiserver_authorization_webhook_duration_seconds_count{name="remote",result="success"} 1`,
		`apiserver_authorization_match_condition_exclusions_total{name="remote",type="Webhook"}`,
		`apiserver_authorization_match_condition_evaluation_seconds_count{name="remote",type="Webhook"}`,
		`apiserver_authorization_config_controller_last_config_info{apiserver_id_hash="",hash="`+configHash(data)+`"} 1`,
		`apiserver_authorization_decisions_total{decision="allowed",name="remote",type="Webhook"} 1`)
}
