package admissiontest

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

func pod(ns, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func TestBuilder(t *testing.T) {
	widget := &unstructured.Unstructured{}
	widget.SetAPIVersion("example.com/v1")
	widget.SetKind("Widget")
	widget.SetName("w")
	cases := []struct {
		name string
		b    *Builder
		want admission.Attributes
	}{
		{"create of a typed object", Create(pod("ns", "p")).User("alice", "dev"),
			admission.Attributes{Name: "p", Namespace: "ns", Operation: admission.Create,
				Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: schema.GroupVersionKind{Version: "v1", Kind: "Pod"},
				Options: &metav1.CreateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "CreateOptions"}},
				Object:  pod("ns", "p"), UserInfo: authUser("alice", "dev")}},
		{"update of a custom resource, status subresource", Update(widget, widget).Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, "status").DryRun(),
			admission.Attributes{Name: "w", Operation: admission.Update, DryRun: true, Subresource: "status",
				Resource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, Kind: widget.GroupVersionKind(),
				Options: &metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "UpdateOptions"}},
				Object:  widget, OldObject: widget}},
		{"delete", Delete(pod("ns", "p")),
			admission.Attributes{Name: "p", Namespace: "ns", Operation: admission.Delete,
				Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: schema.GroupVersionKind{Version: "v1", Kind: "Pod"},
				Options:   &metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "DeleteOptions"}},
				OldObject: pod("ns", "p")}},
		{"connect", Connect(pod("ns", "p"), "exec"),
			admission.Attributes{Name: "p", Namespace: "ns", Operation: admission.Connect, Subresource: "exec",
				Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.b.Attributes()
			if got.Record == nil {
				t.Fatal("Attributes().Record = nil, want a new Record")
			}
			got.Record = nil
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("Attributes() =\n%+v\nwant\n%+v", *got, tc.want)
			}
		})
	}
}

func authUser(name string, groups ...string) (u authenticationv1.UserInfo) {
	u.Username, u.Groups = name, groups
	return u
}

// labeller labels pods, warns, annotates and refuses pods named "bad".
type labeller struct{}

func (labeller) Handles(op admission.Operation) bool { return op == admission.Create }

func (labeller) Admit(_ context.Context, a *admission.Attributes) error {
	p := a.Object.(*corev1.Pod)
	metav1.SetMetaDataLabel(&p.ObjectMeta, "seen", "yes")
	a.Record.AddWarning("labelled")
	return a.Record.AddAnnotation("labeller.example.com/seen", p.Name)
}

func (labeller) Validate(_ context.Context, a *admission.Attributes) error {
	if a.Name == "bad" {
		return admission.NewForbidden(a, errors.New("bad name"))
	}
	return nil
}

func labelled(ns, name string) *corev1.Pod {
	p := pod(ns, name)
	p.Labels = map[string]string{"seen": "yes"}
	return p
}

func TestRun(t *testing.T) {
	Run(t, labeller{}, []Case{
		{Name: "admitted and mutated", Attributes: Create(pod("ns", "good")).Attributes(),
			WantObject: labelled("ns", "good"), WantWarnings: []string{"labelled"}, WantAnnotations: map[string]string{"labeller.example.com/seen": "good"}},
		{Name: "refused by the validating phase", Attributes: Create(pod("ns", "bad")).Attributes(),
			WantErr: `pods "bad" is forbidden: bad name`, WantCode: 403,
			WantWarnings: []string{"labelled"}, WantAnnotations: map[string]string{"labeller.example.com/seen": "bad"}},
		{Name: "not handled", Attributes: Delete(pod("ns", "bad")).Attributes()},
	})
}

func TestMismatches(t *testing.T) {
	forbidden := apierrors.NewForbidden(corev1.Resource("pods"), "p", errors.New("no"))
	record := admission.NewRecord()
	record.AddWarning("w")
	_ = record.AddAnnotation("a.example.com/k", "v")
	a := &admission.Attributes{Object: pod("ns", "p"), Record: record}
	cases := []struct {
		name string
		tc   Case
		err  error
		want []string
	}{
		{"all as expected", Case{WantErr: forbidden.Error(), WantCode: 403, WantObject: pod("ns", "p"), WantWarnings: []string{"w"}, WantAnnotations: map[string]string{"a.example.com/k": "v"}}, forbidden, nil},
		{"admitted, error wanted", Case{WantErr: "x", WantWarnings: []string{"w"}, WantAnnotations: map[string]string{"a.example.com/k": "v"}}, nil, []string{`admitted, want error "x"`}},
		{"error, admission wanted", Case{WantWarnings: []string{"w"}, WantAnnotations: map[string]string{"a.example.com/k": "v"}}, errors.New("boom"), []string{`error = "boom", want admitted`}},
		{"other code", Case{WantErr: forbidden.Error(), WantCode: 404, WantWarnings: []string{"w"}, WantAnnotations: map[string]string{"a.example.com/k": "v"}}, forbidden, []string{"error code = 403, want 404"}},
		{"object, warnings and annotations differ", Case{WantObject: pod("ns", "q")}, nil, []string{"object = ", `warnings = ["w"], want []`, "annotations = map[a.example.com/k:v], want map[]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.tc.mismatches(a, tc.err)
			if len(got) != len(tc.want) {
				t.Fatalf("mismatches = %q, want %q", got, tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("mismatch %d = %q, want it to start with %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}
