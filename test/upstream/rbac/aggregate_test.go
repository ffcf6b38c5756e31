package rbac

import (
	"context"
	"fmt"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/controller/clusterroleaggregation"

	"github.com/admitd/admitd/internal/auth/rbac"
)

// aggregation makes ClusterRoles with labels from a small set, and one or two
// with an aggregationRule, labelled so that no selector picks them: the
// controller's fixpoint is then one step of AggregatedRules.
func (g gen) aggregation() []*rbacv1.ClusterRole {
	labelSets := []map[string]string{{"a": "1"}, {"a": "2"}, {"b": "1"}, {"a": "1", "b": "1"}, nil}
	var out []*rbacv1.ClusterRole
	for i := range 2 + g.r.IntN(6) {
		out = append(out, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("c", g.r.IntN(100), "-", i),
			Labels: labelSets[g.r.IntN(len(labelSets))]}, Rules: g.rules()})
	}
	selectors := []metav1.LabelSelector{
		{MatchLabels: map[string]string{"a": "1"}},
		{MatchLabels: map[string]string{"b": "1"}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: metav1.LabelSelectorOpIn, Values: []string{"1", "2"}}}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "b", Operator: metav1.LabelSelectorOpDoesNotExist}}},
	}
	for i := range 1 + g.r.IntN(2) {
		agg := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("agg-", i), Labels: map[string]string{"b": "9"}},
			AggregationRule: &rbacv1.AggregationRule{}}
		for range 1 + g.r.IntN(2) {
			agg.AggregationRule.ClusterRoleSelectors = append(agg.AggregationRule.ClusterRoleSelectors, selectors[g.r.IntN(len(selectors))])
		}
		out = append(out, agg)
	}
	return out
}

// TestAggregatedRules runs upstream's ClusterRole aggregation controller on
// a fake clientset and waits for it to give each aggregated ClusterRole the
// rules AggregatedRules computes.
func TestAggregatedRules(t *testing.T) {
	if testing.Short() {
		t.Skip("runs upstream's controller")
	}
	g := newGen(21)
	for i := range 25 {
		roles := g.aggregation()
		var objs []runtime.Object
		for _, r := range roles {
			objs = append(objs, r.DeepCopy())
		}
		client := fake.NewClientset(objs...)
		factory := informers.NewSharedInformerFactory(client, 0)
		controller := clusterroleaggregation.NewClusterRoleAggregation(factory.Rbac().V1().ClusterRoles(), client.RbacV1())
		ctx, cancel := context.WithCancel(context.Background())
		factory.Start(ctx.Done())
		go controller.Run(ctx, 1)

		for _, r := range roles {
			want, ok, err := rbac.AggregatedRules(r, roles)
			if err != nil || !ok {
				continue
			}
			var got []rbacv1.PolicyRule
			deadline := time.Now().Add(5 * time.Second)
			for time.Now().Before(deadline) {
				cr, err := client.RbacV1().ClusterRoles().Get(ctx, r.Name, metav1.GetOptions{})
				if err == nil && equality.Semantic.DeepEqual(cr.Rules, want) {
					got = nil
					break
				}
				if err == nil {
					got = cr.Rules
				}
				time.Sleep(10 * time.Millisecond)
			}
			if got != nil {
				t.Errorf("case %d: AggregatedRules(%s) = %v\nupstream's controller: %v", i, r.Name, want, got)
			}
		}
		cancel()
		factory.Shutdown()
	}
}
