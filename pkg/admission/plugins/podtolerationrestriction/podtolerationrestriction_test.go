package podtolerationrestriction

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

type namespaces map[string]*corev1.Namespace

func (n namespaces) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	if ns, ok := n[name]; ok {
		return ns, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
}

func tol(key, value string) corev1.Toleration {
	return corev1.Toleration{Key: key, Operator: corev1.TolerationOpEqual, Value: value, Effect: corev1.TaintEffectNoSchedule}
}

var memoryPressure = corev1.Toleration{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}

func annotation(t *testing.T, ts []corev1.Toleration) string {
	b, err := json.Marshal(ts)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func pod(qos string, ts []corev1.Toleration) *corev1.Pod {
	c := corev1.Container{Name: "test"}
	switch qos {
	case "burstable":
		c.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": resource.MustParse("1")}, Requests: corev1.ResourceList{"cpu": resource.MustParse("500m")}}
	case "guaranteed":
		c.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": resource.MustParse("1")}, Requests: corev1.ResourceList{"cpu": resource.MustParse("1")}}
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "testPod", Namespace: "testNamespace"}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}, Tolerations: ts}}
}

// Upstream's table (TestPodAdmission), with the exact order of the result.
func TestAdmit(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		qos                         string
		clusterDefault, nsDefault   []corev1.Toleration
		nsWhitelist, clusterAllowed []corev1.Toleration
		have, want                  []corev1.Toleration
		err                         string
	}{
		{name: "default cluster tolerations with empty pod tolerations", clusterDefault: []corev1.Toleration{tol("testKey", "testValue")},
			have: []corev1.Toleration{}, want: []corev1.Toleration{tol("testKey", "testValue")}},
		{name: "default cluster tolerations with pod tolerations", clusterDefault: []corev1.Toleration{tol("testKey", "testValue")}, nsDefault: []corev1.Toleration{},
			have: []corev1.Toleration{tol("testKey", "testValue")}, want: []corev1.Toleration{tol("testKey", "testValue")}},
		{name: "namespace tolerations", nsDefault: []corev1.Toleration{tol("testKey", "testValue")},
			have: []corev1.Toleration{tol("testKey", "testValue")}, want: []corev1.Toleration{tol("testKey", "testValue")}},
		{name: "duplicate key pod and namespace tolerations", nsDefault: []corev1.Toleration{tol("testKey", "testValue")},
			have: []corev1.Toleration{tol("testKey", "testValue1")}, want: []corev1.Toleration{tol("testKey", "testValue1"), tol("testKey", "testValue")}},
		{name: "cluster default overridden by an empty namespace default", clusterDefault: []corev1.Toleration{tol("testKey", "testValue2")}, nsDefault: []corev1.Toleration{},
			have: []corev1.Toleration{tol("testKey", "testValue1")}, want: []corev1.Toleration{tol("testKey", "testValue1")}},
		{name: "merged tolerations satisfy the whitelist", nsDefault: []corev1.Toleration{tol("testKey", "testValue")}, nsWhitelist: []corev1.Toleration{tol("testKey", "testValue")},
			want: []corev1.Toleration{tol("testKey", "testValue")}},
		{name: "cluster whitelist overridden by an empty namespace whitelist", nsWhitelist: []corev1.Toleration{}, clusterAllowed: []corev1.Toleration{tol("testKey", "testValue1")},
			have: []corev1.Toleration{tol("testKey", "testValue")}, want: []corev1.Toleration{tol("testKey", "testValue")}},
		{name: "merged tolerations conflict with the namespace whitelist", nsDefault: []corev1.Toleration{tol("testKey", "testValue")}, nsWhitelist: []corev1.Toleration{tol("testKey", "testValue1")},
			err: "pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist"},
		{name: "pod tolerations conflict with the cluster whitelist", clusterAllowed: []corev1.Toleration{tol("testKey", "testValue1")},
			have: []corev1.Toleration{tol("testKey", "testValue")}, err: "pod tolerations (possibly merged with namespace default tolerations) conflict with its cluster whitelist"},
		{name: "memory pressure for a Burstable pod", qos: "burstable", nsDefault: []corev1.Toleration{tol("testKey", "testValue")}, nsWhitelist: []corev1.Toleration{},
			want: []corev1.Toleration{tol("testKey", "testValue"), memoryPressure}},
		{name: "memory pressure for a Guaranteed pod", qos: "guaranteed", nsDefault: []corev1.Toleration{tol("testKey", "testValue")},
			want: []corev1.Toleration{tol("testKey", "testValue"), memoryPressure}},
		{name: "duplicate keys are kept", nsDefault: []corev1.Toleration{},
			have: []corev1.Toleration{tol("testKey", "testValue"), tol("testKey", "testValue1")}, want: []corev1.Toleration{tol("testKey", "testValue"), tol("testKey", "testValue1")}},
	} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "testNamespace", Annotations: map[string]string{}}}
		if tc.nsDefault != nil {
			ns.Annotations[DefaultTolerationsAnnotation] = annotation(t, tc.nsDefault)
		}
		if tc.nsWhitelist != nil {
			ns.Annotations[WhitelistAnnotation] = annotation(t, tc.nsWhitelist)
		}
		p := New(&Configuration{Default: tc.clusterDefault, Whitelist: tc.clusterAllowed}, namespaces{"testNamespace": ns}, admission.PluginContext{}.Gates())
		po := pod(tc.qos, tc.have)
		a := admissiontest.Create(po).Attributes()
		err := p.Admit(context.Background(), a)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: Admit = %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: Admit = %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(po.Spec.Tolerations, tc.want) {
			t.Errorf("%s: tolerations = %v, want %v", tc.name, po.Spec.Tolerations, tc.want)
		}
		// Reinvocation changes nothing.
		if err := p.Admit(context.Background(), a); err != nil || !reflect.DeepEqual(po.Spec.Tolerations, tc.want) {
			t.Errorf("%s: second Admit = %v, tolerations %v", tc.name, err, po.Spec.Tolerations)
		}
	}
}

func TestUpdateTakesNoDefaults(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "testNamespace", Annotations: map[string]string{DefaultTolerationsAnnotation: annotation(t, []corev1.Toleration{tol("a", "b")})}}}
	p := New(nil, namespaces{"testNamespace": ns}, admission.PluginContext{}.Gates())
	po := pod("burstable", nil)
	if err := p.Admit(context.Background(), admissiontest.Update(po, pod("", nil)).Attributes()); err != nil {
		t.Fatal(err)
	}
	if want := []corev1.Toleration{memoryPressure}; !reflect.DeepEqual(po.Spec.Tolerations, want) {
		t.Errorf("tolerations after UPDATE = %v, want %v", po.Spec.Tolerations, want)
	}
}

func TestNamespaceErrors(t *testing.T) {
	bad := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "testNamespace", Annotations: map[string]string{DefaultTolerationsAnnotation: "{"}}}
	for name, tc := range map[string]struct {
		ns  namespaces
		err string
	}{
		"missing":   {namespaces{}, `namespaces "testNamespace" not found`},
		"malformed": {namespaces{"testNamespace": bad}, "unexpected end of JSON input"},
	} {
		err := New(nil, tc.ns, admission.PluginContext{}.Gates()).Admit(context.Background(), admissiontest.Create(pod("", nil)).Attributes())
		if err == nil || err.Error() != tc.err {
			t.Errorf("%s: Admit = %v, want %q", name, err, tc.err)
		}
	}
}

func TestLoadConfiguration(t *testing.T) {
	const head = "apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1\nkind: Configuration\n"
	for _, tc := range []struct {
		in, err string
		want    *Configuration
	}{
		{in: head, want: &Configuration{}},
		{in: head + "default: [{key: a, operator: Exists}]\nwhitelist: [{operator: Exists}]\nunknown: 1\n",
			want: &Configuration{Default: []corev1.Toleration{{Key: "a", Operator: "Exists"}}, Whitelist: []corev1.Toleration{{Operator: "Exists"}}}},
		{in: `{"apiVersion":"podtolerationrestriction.admission.k8s.io/v1alpha1","kind":"Configuration","Default":[{"key":"a"}]}`, want: &Configuration{}},
		{in: "", err: "Object 'Kind' is missing in ''"},
		{in: "kind: Configuration\n", err: "Object 'apiVersion' is missing in 'kind: Configuration\n'"},
		{in: "apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1\nkind: Conf\n",
			err: `no kind "Conf" is registered for version "podtolerationrestriction.admission.k8s.io/v1alpha1" in scheme "pkg/runtime/scheme.go:111"`},
		{in: head + "default: 5\n", err: "json: cannot unmarshal number into Go struct field Configuration.default of type []v1.Toleration"},
		{in: head + "default: [{Key: a}]\n",
			err: "invalid config: [podtolerationrestriction.default[0].operator: Invalid value: \"\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"]"},
		{in: "a: b: c", err: "yaml: mapping values are not allowed in this context"},
		{in: "{\"apiVersion\": 1,", err: "couldn't get version/kind; json parse error: unexpected end of JSON input"},
	} {
		got, err := LoadConfiguration(strings.NewReader(tc.in))
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("LoadConfiguration(%q) = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("LoadConfiguration(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	if got, err := LoadConfiguration(nil); err != nil || !reflect.DeepEqual(got, &Configuration{}) {
		t.Errorf("LoadConfiguration(nil) = %+v, %v; want empty", got, err)
	}
}
