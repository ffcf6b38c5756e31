package lint_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/admitd/admitd/pkg/lint"
)

// Lint a webhook configuration read from YAML and print each finding's ID
// and severity.
func ExampleRun() {
	s := &lint.Set{}
	err := s.Decode(strings.NewReader(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: pods}
webhooks:
- name: pods.example.com
  clientConfig: {url: "https://webhook.example.com/pods"}
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  sideEffects: None
  admissionReviewVersions: [v1beta1]
`), "pods.yaml")
	if err != nil {
		panic(err)
	}
	for _, f := range lint.Run(context.Background(), s, lint.Options{}) {
		fmt.Println(f.ID, f.Severity, f.Webhook)
	}
	// Output:
	// AL001 error pods.example.com
	// AL009 warning pods.example.com
}
