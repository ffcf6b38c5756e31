package lint

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/apis/admissionregistration"
)

// bigConfiguration is one validating configuration of n webhooks, each on
// its own resource of its own group, as the server lints it on a write.
func bigConfiguration(n int) *v1.ValidatingWebhookConfiguration {
	c := &v1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "big"}}
	for i := range n {
		c.Webhooks = append(c.Webhooks, v1.ValidatingWebhook{
			Name:                    fmt.Sprintf("hook-%d.example.com", i),
			ClientConfig:            v1.WebhookClientConfig{URL: ptr.To(fmt.Sprintf("https://webhook.example.com/%d", i))},
			Rules:                   []v1.RuleWithOperations{{Operations: []v1.OperationType{v1.Create, v1.Update}, Rule: v1.Rule{APIGroups: []string{fmt.Sprintf("g%d.example.com", i%50)}, APIVersions: []string{"v1"}, Resources: []string{fmt.Sprintf("things%d", i), fmt.Sprintf("things%d/status", i)}}}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"team": fmt.Sprint(i % 7)}},
			SideEffects:             ptr.To(v1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		})
	}
	admissionregistration.Default(c)
	return c
}

func BenchmarkWarnings_2000Webhooks(b *testing.B) {
	c := bigConfiguration(2000)
	b.ReportAllocs()
	for b.Loop() {
		if w := Warnings(c, nil); len(w) != 0 {
			b.Fatalf("warnings: %q", w[:1])
		}
	}
}

func BenchmarkWarnings_10Webhooks(b *testing.B) {
	c := bigConfiguration(10)
	b.ReportAllocs()
	for b.Loop() {
		Warnings(c, nil)
	}
}
