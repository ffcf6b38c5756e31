package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

var bobGetsPods = auth.Attributes{User: authenticationv1.UserInfo{Username: "bob"}, Verb: "get",
	ResourceRequest: true, APIVersion: "v1", Resource: "pods", Namespace: "ns"}

func authzConfig(authorizers string) string {
	return "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n" + authorizers
}

func writeAuthzConfig(t *testing.T, path, data string) {
	t.Helper()
	// Written beside and renamed, as editors do, so a reader never sees
	// half a file.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func decide(t *testing.T, a auth.Authorizer) auth.Decision {
	t.Helper()
	d, _, _ := a.Authorize(context.Background(), bobGetsPods)
	return d
}

// The chain follows the file: a valid change is picked up by the watch, an
// invalid one is ignored and the last valid chain kept.
func TestConfiguredAuthorizerReloads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "authz.yaml")
	writeAuthzConfig(t, path, authzConfig("- {type: AlwaysDeny, name: nope}\n"))
	c, err := newConfiguredAuthorizer(path, modeAuthorizers{}, prometheus.NewRegistry(), quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := c.watch(ctx); err != nil {
		t.Fatal(err)
	}
	if d := decide(t, c); d != auth.DecisionNoOpinion {
		t.Fatalf("AlwaysDeny chain: %v, want NoOpinion", d)
	}
	writeAuthzConfig(t, path, authzConfig("- {type: AlwaysAllow, name: allow-all}\n"))
	waitFor(t, "the AlwaysAllow chain to be loaded", func() bool { return decide(t, c) == auth.DecisionAllow })
	writeAuthzConfig(t, path, authzConfig("- {type: Bogus, name: x}\n"))
	c.reload() // as the watch would; the watch may already have done it
	if d := decide(t, c); d != auth.DecisionAllow {
		t.Errorf("after an invalid file: %v, want Allow (the last valid chain)", d)
	}
	if _, err := newConfiguredAuthorizer(path, modeAuthorizers{}, prometheus.NewRegistry(), quietLogger()); err == nil {
		t.Error("newConfiguredAuthorizer(invalid file): no error, want one")
	}
}

// A webhook entry calls its server; failurePolicy decides a failed call.
func TestConfiguredWebhookFailurePolicy(t *testing.T) {
	srv := webhooktest.Start(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	}))
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: srv.URL, CertificateAuthorityData: srv.CABundle()}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c"}
	kc.CurrentContext = "c"
	dir := t.TempDir()
	kcPath := filepath.Join(dir, "kc")
	if err := clientcmd.WriteToFile(*kc, kcPath); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		policy, extra string
		want          auth.Decision
	}{
		{"NoOpinion", "", auth.DecisionNoOpinion},
		{"Deny", "", auth.DecisionDeny},
		// bob does not match: the failing webhook is not called.
		{"Deny", "    matchConditionSubjectAccessReviewVersion: v1\n    matchConditions:\n    - expression: request.user == 'alice'\n", auth.DecisionAllow},
	} {
		path := filepath.Join(dir, "authz.yaml")
		writeAuthzConfig(t, path, authzConfig(`- type: Webhook
  name: remote
  webhook:
    timeout: 2s
    subjectAccessReviewVersion: v1
    failurePolicy: `+tc.policy+`
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: `+kcPath+`}
`+tc.extra+`- {type: AlwaysAllow, name: allow}
`))
		c, err := newConfiguredAuthorizer(path, modeAuthorizers{}, prometheus.NewRegistry(), quietLogger())
		if err != nil {
			t.Fatal(err)
		}
		want := tc.want
		if want == auth.DecisionNoOpinion {
			want = auth.DecisionAllow // the next authorizer is asked
		}
		if d := decide(t, c); d != want {
			t.Errorf("failurePolicy %s %s: %v, want %v", tc.policy, tc.extra, d, want)
		}
	}
}
