package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/client-go/kubernetes"

	"github.com/admitd/admitd/internal/registry"
)

// TestFlowControlBootstrapAndHeaders: the server stores upstream's
// mandatory and suggested configuration; a user's request names, by UID,
// the schema and level it was classified under; a schema naming a missing
// level is marked Dangling; a changed suggested object is put back by the
// ensurer while it is annotated for auto-update.
func TestFlowControlBootstrapAndHeaders(t *testing.T) {
	o := testOptions(t)
	o.TokenAuthFile = filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(o.TokenAuthFile, []byte("bob-token,bob,7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, cfg := startWith(t, o)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	fcs := cs.FlowcontrolV1()

	schemas, err := fcs.FlowSchemas().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*flowcontrolv1.FlowSchema{}
	for _, fs := range append(append([]*flowcontrolv1.FlowSchema{}, bootstrap.MandatoryFlowSchemas...), bootstrap.SuggestedFlowSchemas...) {
		want[fs.Name] = fs
	}
	if len(schemas.Items) != len(want) {
		t.Errorf("%d FlowSchemas, want %d", len(schemas.Items), len(want))
	}
	byName := map[string]flowcontrolv1.FlowSchema{}
	for _, fs := range schemas.Items {
		byName[fs.Name] = fs
		w := want[fs.Name]
		if w == nil || fs.Spec.MatchingPrecedence != w.Spec.MatchingPrecedence || fs.Spec.PriorityLevelConfiguration != w.Spec.PriorityLevelConfiguration ||
			fs.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != "true" {
			t.Errorf("stored FlowSchema %s: %+v", fs.Name, fs.Spec)
		}
	}
	levels, err := fcs.PriorityLevelConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	levelUID := map[string]string{}
	for _, pl := range levels.Items {
		levelUID[pl.Name] = string(pl.UID)
	}
	if len(levels.Items) != len(bootstrap.MandatoryPriorityLevelConfigurations)+len(bootstrap.SuggestedPriorityLevelConfigurations) {
		t.Errorf("%d PriorityLevelConfigurations", len(levels.Items))
	}

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CAPEM)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/version", nil)
	req.Header.Set("Authorization", "Bearer bob-token")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if got, want := resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID"), string(byName["global-default"].UID); got != want || got == "" {
		t.Errorf("bob's FlowSchema UID %q, want global-default's %q", got, want)
	}
	if got, want := resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID"), levelUID["global-default"]; got != want || got == "" {
		t.Errorf("bob's PriorityLevel UID %q, want global-default's %q", got, want)
	}

	dangling := bootstrap.SuggestedFlowSchemaGlobalDefault.DeepCopy()
	dangling.ObjectMeta = metav1.ObjectMeta{Name: "to-nowhere"}
	dangling.Spec.MatchingPrecedence = 5000
	dangling.Spec.PriorityLevelConfiguration.Name = "nowhere"
	if _, err := fcs.FlowSchemas().Create(ctx, dangling, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the Dangling condition", func() bool {
		fs, err := fcs.FlowSchemas().Get(ctx, "to-nowhere", metav1.GetOptions{})
		return err == nil && len(fs.Status.Conditions) == 1 && fs.Status.Conditions[0].Type == flowcontrolv1.FlowSchemaConditionDangling &&
			fs.Status.Conditions[0].Status == flowcontrolv1.ConditionTrue &&
			strings.Contains(fs.Status.Conditions[0].Message, `named "nowhere" but there is no such object`)
	})

	// once its Dangling condition is written (which changes it), change
	// a suggested schema
	waitFor(t, "service-accounts' status", func() bool {
		fs, err := fcs.FlowSchemas().Get(ctx, "service-accounts", metav1.GetOptions{})
		return err == nil && len(fs.Status.Conditions) == 1
	})
	changed, err := fcs.FlowSchemas().Get(ctx, "service-accounts", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	changed.Spec.MatchingPrecedence = 9100
	if _, err := fcs.FlowSchemas().Update(ctx, changed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ensureFlowControlBootstrap(ctx, s.api, registry.NewCatalogue()); err != nil {
		t.Fatal(err)
	}
	back, err := fcs.FlowSchemas().Get(ctx, "service-accounts", metav1.GetOptions{})
	if err != nil || back.Spec.MatchingPrecedence != 9000 {
		t.Errorf("an auto-updated suggested schema was not put back: %v %v", back.Spec.MatchingPrecedence, err)
	}
	back.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] = "false"
	back.Spec.MatchingPrecedence = 9100
	if _, err := fcs.FlowSchemas().Update(ctx, back, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ensureFlowControlBootstrap(ctx, s.api, registry.NewCatalogue()); err != nil {
		t.Fatal(err)
	}
	if kept, _ := fcs.FlowSchemas().Get(ctx, "service-accounts", metav1.GetOptions{}); kept.Spec.MatchingPrecedence != 9100 {
		t.Errorf("a schema annotated autoupdate-spec=false was changed back: %d", kept.Spec.MatchingPrecedence)
	}
}
