package match_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/match"
)

// A dispatcher compiles its webhooks once per configuration change, then,
// per request, visits only the candidates the index returns.
func Example() {
	pods := []v1.RuleWithOperations{{
		Operations: []v1.OperationType{v1.Create},
		Rule:       v1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
	}}
	deployments := []v1.RuleWithOperations{{
		Operations: []v1.OperationType{v1.OperationAll},
		Rule:       v1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
	}}
	names := []string{"pods.example.com", "prod-only.example.com", "deployments.example.com"}
	hooks := []*match.Criteria{
		match.Webhook(pods, nil, &metav1.LabelSelector{}, &metav1.LabelSelector{}),
		match.Webhook(pods, nil, &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}, &metav1.LabelSelector{}),
		match.Webhook(deployments, nil, &metav1.LabelSelector{}, &metav1.LabelSelector{}),
	}
	index := match.NewIndex(hooks)

	env := match.Env{Namespaces: newNamespaces(namespaceObj("dev", map[string]string{"env": "dev"}))}
	a := &admission.Attributes{
		Namespace: "dev", Name: "web",
		Resource: gvr("", "v1", "pods"), Kind: gvk("", "v1", "Pod"),
		Operation: admission.Create, Record: admission.NewRecord(),
	}
	r := match.NewRequest(context.Background(), env, a)
	for _, i := range index.Candidates(&r, nil) {
		d := hooks[i].Match(&r)
		// Here a real dispatcher would evaluate matchConditions, convert
		// the object to d.Kind and call the webhook.
		fmt.Println(names[i], d.Reason, d.Resource.Resource)
	}
	// Tracing can ask any hook why it was skipped.
	fmt.Println(names[1], hooks[1].Match(&r).Reason)
	// Output:
	// pods.example.com Matched pods
	// prod-only.example.com NamespaceSelector
}
