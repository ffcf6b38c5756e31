package podnodeselector

import (
	"context"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

const (
	conflictsNamespace = `pods "testPod" is forbidden: pod node label selector conflicts with its namespace node label selector`
	conflictsWhitelist = `pods "testPod" is forbidden: pod node label selector labels conflict with its namespace whitelist`
)

// Upstream's table (TestPodAdmission); a nil annotation is no annotation.
func TestAdmit(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name           string
		clusterDefault string
		annotation     *string
		whitelist      string
		pod, want      map[string]string
		err            string
	}{
		{name: "no node selectors", pod: map[string]string{}, want: map[string]string{}},
		{name: "default node selector", clusterDefault: "infra = false", pod: map[string]string{}, want: map[string]string{"infra": "false"}},
		{name: "namespace selector with whitespace", annotation: str(" infra = false "), pod: map[string]string{}, want: map[string]string{"infra": "false"}},
		{name: "namespace selector wins over the default", clusterDefault: "infra = false", annotation: str("infra=true"), want: map[string]string{"infra": "true"}},
		{name: "empty namespace selector", clusterDefault: "infra = false", annotation: str(""), want: map[string]string{}},
		{name: "namespace and pod selectors", clusterDefault: "infra = false", annotation: str("infra=true"), pod: map[string]string{"env": "test"},
			want: map[string]string{"infra": "true", "env": "test"}},
		{name: "conflict, one label", clusterDefault: "env = test", annotation: str("infra=true"), pod: map[string]string{"infra": "false"}, err: conflictsNamespace},
		{name: "conflict, several labels", clusterDefault: "env=dev", annotation: str("infra=false, env = test"), pod: map[string]string{"env": "dev", "color": "blue"}, err: conflictsNamespace},
		{name: "merged selector within the whitelist", annotation: str("infra=false, env = dev"), whitelist: "env=dev, infra=false, color=blue",
			pod: map[string]string{"env": "dev", "color": "blue"}, want: map[string]string{"infra": "false", "env": "dev", "color": "blue"}},
		{name: "merged selector outside the whitelist", annotation: str("infra=false, env = dev"), whitelist: "env=dev, infra=true, color=blue",
			pod: map[string]string{"env": "dev", "color": "blue"}, err: conflictsWhitelist},
		{name: "default selector outside the whitelist", clusterDefault: "env=dev", whitelist: "env=prd", err: conflictsWhitelist},
		{name: "malformed annotation", annotation: str("a=b=c"), err: "invalid selector: [a b c]"},
	} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "testNamespace"}}
		if tc.annotation != nil {
			ns.Annotations = map[string]string{NodeSelectorAnnotation: *tc.annotation}
		}
		p := New(map[string]string{ClusterDefaultKey: tc.clusterDefault, "testNamespace": tc.whitelist}, namespaces{"testNamespace": ns})
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "testPod", Namespace: "testNamespace"}, Spec: corev1.PodSpec{NodeSelector: tc.pod}}
		a := admissiontest.Create(pod).Attributes()
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
		if !reflect.DeepEqual(pod.Spec.NodeSelector, tc.want) {
			t.Errorf("%s: nodeSelector = %v, want %v", tc.name, pod.Spec.NodeSelector, tc.want)
		}
		if err := p.Validate(context.Background(), a); err != nil {
			t.Errorf("%s: Validate after Admit = %v", tc.name, err)
		}
	}
}

func TestMissingNamespace(t *testing.T) {
	p := New(nil, namespaces{})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "testPod", Namespace: "gone"}}
	err := p.Admit(context.Background(), admissiontest.Create(pod).Attributes())
	if err == nil || err.Error() != "Internal error occurred: namespace gone does not exist" {
		t.Errorf("Admit in a missing namespace = %v, want the internal error upstream gives", err)
	}
}

func TestHandles(t *testing.T) {
	p := New(nil, namespaces{})
	for op, want := range map[admission.Operation]bool{admission.Create: true, admission.Update: false, admission.Delete: false, admission.Connect: false} {
		if got := p.Handles(op); got != want {
			t.Errorf("Handles(%s) = %v, want %v", op, got, want)
		}
	}
}

func TestReadConfiguration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string
	}{
		{"podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: env=prod\n  ns1: env=dev\n", map[string]string{"clusterDefaultNodeSelector": "env=prod", "ns1": "env=dev"}},
		{`{"podNodeSelectorPluginConfig": {"clusterDefaultNodeSelector": "a=b"}}`, map[string]string{"clusterDefaultNodeSelector": "a=b"}},
		{"PodNodeSelectorPluginConfig:\n  x: v\n", map[string]string{"x": "v"}},
		{"other: 1\n", nil},
		{"podNodeSelectorPluginConfig: 5\n---\npodNodeSelectorPluginConfig:\n  x: v\n", map[string]string{"x": "v"}},
		{"podNodeSelectorPluginConfig:\n  x: v\n---\npodNodeSelectorPluginConfig:\n  z: w\n", map[string]string{"x": "v"}},
		{"{\"podNodeSelectorPluginConfig\": ", nil},
	} {
		if got := ReadConfiguration(strings.NewReader(tc.in)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ReadConfiguration(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if got := ReadConfiguration(nil); got != nil {
		t.Errorf("ReadConfiguration(nil) = %v, want none", got)
	}
}
