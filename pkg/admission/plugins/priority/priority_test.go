package priority

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

// classes is the PriorityClass cache; err fails every read.
type classes struct {
	byName map[string]*schedulingv1.PriorityClass
	err    error
}

func cache(pcs ...*schedulingv1.PriorityClass) *classes {
	c := &classes{byName: map[string]*schedulingv1.PriorityClass{}}
	for _, pc := range pcs {
		c.byName[pc.Name] = pc
	}
	return c
}

func (c *classes) GetCachedObject(_ context.Context, gvr schema.GroupVersionResource, _, name string) (runtime.Object, error) {
	if c.err != nil {
		return nil, c.err
	}
	if pc, ok := c.byName[name]; ok {
		return pc, nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (c *classes) ListCachedObjects(context.Context, schema.GroupVersionResource, string, labels.Selector) ([]runtime.Object, error) {
	if c.err != nil {
		return nil, c.err
	}
	var out []runtime.Object
	for _, pc := range c.byName {
		out = append(out, pc)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].(*schedulingv1.PriorityClass).Name < out[j].(*schedulingv1.PriorityClass).Name
	})
	return out, nil
}

var (
	never = corev1.PreemptNever
	lower = corev1.PreemptLowerPriority
)

func class(name string, value int32, globalDefault bool, policy *corev1.PreemptionPolicy) *schedulingv1.PriorityClass {
	return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, GlobalDefault: globalDefault, PreemptionPolicy: policy}
}

var (
	default1      = class("default1", 1000, true, &lower)
	default2      = class("default2", 2000, true, &lower)
	nondefault1   = class("nondefault1", 2000, false, &lower)
	clusterCrit   = class("system-cluster-critical", 2000000000, false, &lower)
	neverDefault  = class("neverdefault", 2000, true, &never)
	withoutPolicy = class("nopolicy", 3000, false, nil)
)

func ptr[T any](v T) *T { return &v }

func pod(edit ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	for _, e := range edit {
		e(p)
	}
	return p
}

func className(n string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.PriorityClassName = n }
}
func priority(v int32) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Spec.Priority = ptr(v) } }
func policy(v corev1.PreemptionPolicy) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.PreemptionPolicy = ptr(v) }
}

const forbidden = `pods "p" is forbidden: `

func TestPodCreate(t *testing.T) {
	tests := []struct {
		name     string
		classes  *classes
		pod      *corev1.Pod
		want     *corev1.Pod
		wantErr  string
		wantCode int32
	}{
		{name: "class resolved", classes: cache(default1, nondefault1), pod: pod(className("nondefault1")),
			want: pod(className("nondefault1"), priority(2000), policy(lower))},
		{name: "global default", classes: cache(default1), pod: pod(),
			want: pod(className("default1"), priority(1000), policy(lower))},
		{name: "no classes", classes: cache(), pod: pod(), want: pod(priority(0), policy(lower))},
		{name: "no default class", classes: cache(nondefault1), pod: pod(), want: pod(priority(0), policy(lower))},
		{name: "lowest default wins", classes: cache(default2, default1), pod: pod(),
			want: pod(className("default1"), priority(1000), policy(lower))},
		{name: "system class anywhere", classes: cache(clusterCrit), pod: pod(className("system-cluster-critical")),
			want: pod(className("system-cluster-critical"), priority(2000000000), policy(lower))},
		{name: "unknown class", classes: cache(default1), pod: pod(className("non-existing")),
			wantErr: forbidden + "no PriorityClass with name non-existing was found", wantCode: http.StatusForbidden},
		{name: "priority differs", classes: cache(default1), pod: pod(className("default1"), priority(5)),
			wantErr:  forbidden + "the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name",
			wantCode: http.StatusForbidden},
		{name: "priority differs from no class", classes: cache(), pod: pod(priority(5)),
			wantErr: forbidden + "the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name"},
		{name: "priority matches", classes: cache(default2), pod: pod(priority(2000)),
			want: pod(className("default2"), priority(2000), policy(lower))},
		{name: "policy differs", classes: cache(default1), pod: pod(className("default1"), policy(never)),
			wantErr: forbidden + "the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name"},
		{name: "policy from the class", classes: cache(neverDefault), pod: pod(),
			want: pod(className("neverdefault"), priority(2000), policy(never))},
		{name: "class without policy keeps the pod's", classes: cache(withoutPolicy), pod: pod(className("nopolicy"), policy(never)),
			want: pod(className("nopolicy"), priority(3000), policy(never))},
		{name: "class without policy, pod without", classes: cache(withoutPolicy), pod: pod(className("nopolicy")),
			want: pod(className("nopolicy"), priority(3000))},
		{name: "lister failure on default", classes: &classes{err: errors.New("boom")}, pod: pod(),
			wantErr: "error occurred while retrieving default priority class: boom"},
		{name: "lister failure on a class", classes: &classes{err: errors.New("boom")}, pod: pod(className("x")),
			wantErr: "failed to resolve PriorityClass with name x: boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := New(tc.classes)
			obj := tc.pod.DeepCopy()
			err := p.Admit(context.Background(), admissiontest.Create(obj).Attributes())
			checkErr(t, err, tc.wantErr, tc.wantCode)
			if tc.want == nil {
				return
			}
			if !equality.Semantic.DeepEqual(obj, tc.want) {
				t.Fatalf("Admit: spec = %+v, want %+v", obj.Spec, tc.want.Spec)
			}
			again := obj.DeepCopy()
			if err := p.Admit(context.Background(), admissiontest.Create(again).Attributes()); err != nil {
				t.Fatalf("second Admit = %v", err)
			}
			if !equality.Semantic.DeepEqual(obj, again) {
				t.Errorf("second Admit changed the pod: %+v", again.Spec)
			}
		})
	}
}

func checkErr(t *testing.T, err error, want string, code int32) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("error = %v, want none", err)
	case want != "" && err == nil:
		t.Fatalf("admitted, want error %q", want)
	case want != "" && err.Error() != want:
		t.Fatalf("error = %q, want %q", err, want)
	}
	var st apierrors.APIStatus
	if code != 0 && (!errors.As(err, &st) || st.Status().Code != code) {
		t.Errorf("error %v: want code %d", err, code)
	}
}

func TestPodUpdateKeepsPriority(t *testing.T) {
	p := New(cache())
	old := pod(className("x"), priority(7), policy(never))
	obj := pod(className("x"))
	if err := p.Admit(context.Background(), admissiontest.Update(obj, old).Attributes()); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(obj, old) {
		t.Errorf("updated spec = %+v, want %+v", obj.Spec, old.Spec)
	}
	obj = pod(className("x"), priority(9))
	if err := p.Admit(context.Background(), admissiontest.Update(obj, old).Attributes()); err != nil {
		t.Fatal(err)
	}
	if *obj.Spec.Priority != 9 || *obj.Spec.PreemptionPolicy != never {
		t.Errorf("updated spec = %+v, want priority 9 (kept for validation) and policy Never", obj.Spec)
	}
}

func TestIgnored(t *testing.T) {
	p := New(&classes{err: errors.New("must not be read")})
	podsGVR := corev1.SchemeGroupVersion.WithResource("pods")
	for name, a := range map[string]*admission.Attributes{
		"subresource":    admissiontest.Create(pod()).Resource(podsGVR, "binding").Attributes(),
		"delete":         admissiontest.Delete(pod()).Attributes(),
		"other kind":     admissiontest.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "p"}}).Attributes(),
		"pc subresource": admissiontest.Create(default1.DeepCopy()).Resource(schedulingv1.SchemeGroupVersion.WithResource("priorityclasses"), "status").Attributes(),
		"pc delete":      admissiontest.Delete(default1.DeepCopy()).Attributes(),
	} {
		if err := p.Admit(context.Background(), a); err != nil {
			t.Errorf("%s: Admit = %v", name, err)
		}
		if err := p.Validate(context.Background(), a); err != nil {
			t.Errorf("%s: Validate = %v", name, err)
		}
	}
	a := admissiontest.Create(&corev1.ConfigMap{}).Resource(podsGVR, "").Attributes()
	if err := p.Admit(context.Background(), a); err == nil || err.Error() != "resource was marked with kind Pod but was unable to be converted" || !apierrors.IsBadRequest(err) {
		t.Errorf("pod that is not a Pod: Admit = %v", err)
	}
	a = admissiontest.Create(&corev1.ConfigMap{}).Resource(schedulingv1.SchemeGroupVersion.WithResource("priorityclasses"), "").Attributes()
	if err := p.Validate(context.Background(), a); err == nil || err.Error() != "resource was marked with kind PriorityClass but was unable to be converted" {
		t.Errorf("PriorityClass that is not one: Validate = %v", err)
	}
}

func TestPriorityClassValidate(t *testing.T) {
	renamed := default1.DeepCopy()
	renamed.Name = "default1-renamed"
	tests := []struct {
		name     string
		classes  *classes
		class    *schedulingv1.PriorityClass
		op       admission.Operation
		wantErr  string
		wantCode int32
	}{
		{name: "first default", classes: cache(), class: default1, op: admission.Create},
		{name: "second default", classes: cache(default1), class: default2, op: admission.Create,
			wantErr: `priorityclasses.scheduling.k8s.io "default2" is forbidden: PriorityClass default1 is already marked as default. Only one default can exist`, wantCode: http.StatusForbidden},
		{name: "non-default beside a default", classes: cache(default1), class: nondefault1, op: admission.Create},
		{name: "update of the default itself", classes: cache(default1), class: default1, op: admission.Update},
		{name: "update making another default", classes: cache(default1), class: renamed, op: admission.Update,
			wantErr: `priorityclasses.scheduling.k8s.io "default1-renamed" is forbidden: PriorityClass default1 is already marked as default. Only one default can exist`},
		{name: "create of a same-named default", classes: cache(default1), class: default1, op: admission.Create,
			wantErr: `priorityclasses.scheduling.k8s.io "default1" is forbidden: PriorityClass default1 is already marked as default. Only one default can exist`},
		{name: "lister failure", classes: &classes{err: errors.New("boom")}, class: default1, op: admission.Create,
			wantErr: "failed to get default priority class: boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := tc.class.DeepCopy()
			b := admissiontest.Create(obj)
			if tc.op == admission.Update {
				b = admissiontest.Update(obj, tc.class.DeepCopy())
			}
			a := b.Resource(schedulingv1.SchemeGroupVersion.WithResource("priorityclasses"), "").Attributes()
			checkErr(t, New(tc.classes).Validate(context.Background(), a), tc.wantErr, tc.wantCode)
		})
	}
}

// BenchmarkAdmitCreate is the common pod create: no class, one global
// default among the two system classes.
func BenchmarkAdmitCreate(b *testing.B) {
	p := New(cache(class("system-node-critical", 2000001000, false, &lower), clusterCrit, default1))
	in := pod()
	b.ReportAllocs()
	for b.Loop() {
		a := admissiontest.Create(in.DeepCopy()).Attributes()
		if err := p.Admit(context.Background(), a); err != nil {
			b.Fatal(err)
		}
	}
}
