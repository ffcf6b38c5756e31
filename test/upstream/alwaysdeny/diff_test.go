package alwaysdeny

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	upadmit "k8s.io/kubernetes/plugin/pkg/admission/admit"
	updeny "k8s.io/kubernetes/plugin/pkg/admission/deny"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/alwaysadmit"
	ours "github.com/admitd/admitd/pkg/admission/plugins/alwaysdeny"
)

func describe(err error) string {
	if err == nil {
		return "admitted"
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		s := st.Status()
		return fmt.Sprintf("%d %s %q %+v", s.Code, s.Reason, s.Message, s.Details)
	}
	return fmt.Sprintf("%q", err.Error())
}

type target struct {
	gvr schema.GroupVersionResource
	obj func(name, generateName string) runtime.Object
}

var targets = []target{
	{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, func(n, g string) runtime.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, GenerateName: g, Namespace: "default"}}
	}},
	{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, func(n, g string) runtime.Object {
		return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: n, GenerateName: g}}
	}},
	{schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, func(n, g string) runtime.Object {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n, GenerateName: g}}
	}},
}

func TestSameDecisions(t *testing.T) {
	type pair struct {
		name string
		up   upadmission.Interface
		our  admission.Handler
	}
	plugins := []pair{{"AlwaysDeny", updeny.NewAlwaysDeny(), ours.Plugin{}}, {"AlwaysAdmit", upadmit.NewAlwaysAdmit(), alwaysadmit.Plugin{}}}
	rnd := rand.New(rand.NewPCG(2, 37))
	const n = 500
	outcomes := map[string]int{}
	for i := range n {
		tg := targets[rnd.IntN(len(targets))]
		op := []admission.Operation{admission.Create, admission.Update, admission.Delete, admission.Connect}[rnd.IntN(4)]
		reqName := []string{"", "view", "pl-ad"}[rnd.IntN(3)]
		objName, gen := []string{"", "obj"}[rnd.IntN(2)], []string{"", "gen-"}[rnd.IntN(2)]
		sub := []string{"", "", "status", "proxy"}[rnd.IntN(4)]
		var obj runtime.Object
		if op == admission.Create || op == admission.Update {
			obj = tg.obj(objName, gen)
		}
		for _, p := range plugins {
			for _, phase := range []string{"admit", "validate"} {
				a := &admission.Attributes{Name: reqName, Operation: op, Resource: tg.gvr, Subresource: sub, Object: obj, Record: admission.NewRecord()}
				ua := upadmission.NewAttributesRecord(obj, nil, schema.GroupVersionKind{}, "", reqName, tg.gvr, sub, upadmission.Operation(op), nil, false, nil)
				var got, want error
				if phase == "admit" {
					got = p.our.(admission.Mutator).Admit(context.Background(), a)
					want = p.up.(upadmission.MutationInterface).Admit(context.Background(), ua, nil)
				} else {
					got = p.our.(admission.Validator).Validate(context.Background(), a)
					want = p.up.(upadmission.ValidationInterface).Validate(context.Background(), ua, nil)
				}
				if p.our.Handles(op) != p.up.Handles(upadmission.Operation(op)) {
					t.Errorf("%s Handles(%s) differs", p.name, op)
				}
				if g, w := describe(got), describe(want); g != w {
					t.Errorf("%d %s %s %s %v %q (object %q/%q):\n admitd   = %s\n upstream = %s", i, p.name, phase, op, tg.gvr, reqName, objName, gen, g, w)
				}
				outcomes[describe(want)]++
			}
		}
	}
	t.Logf("%d generated requests through both plugins and phases, %d distinct outcomes", n, len(outcomes))
	if len(outcomes) < 10 {
		t.Errorf("only %d distinct outcomes", len(outcomes))
	}
}
