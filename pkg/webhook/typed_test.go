package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/pkg/webhook"
	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

// podPolicy refuses pods without a team label, logs what it was called
// with, and defaults the restart policy.
type podPolicy struct{ calls []string }

func (p *podPolicy) ValidateCreate(ctx context.Context, pod *corev1.Pod) (webhook.Warnings, error) {
	req, _ := webhook.RequestFromContext(ctx)
	p.calls = append(p.calls, "create "+pod.Name+" by "+req.UserInfo.Username)
	if pod.Labels["team"] == "" {
		return webhook.Warnings{"no team"}, errors.New("pods need a team label")
	}
	return webhook.Warnings{"checked"}, nil
}

func (p *podPolicy) ValidateUpdate(_ context.Context, old, pod *corev1.Pod) (webhook.Warnings, error) {
	p.calls = append(p.calls, "update "+old.Labels["team"]+"->"+pod.Labels["team"])
	if old.Labels["team"] != pod.Labels["team"] {
		return nil, apierrors.NewForbidden(corev1.Resource("pods"), pod.Name, errors.New("team is immutable"))
	}
	return nil, nil
}

func (p *podPolicy) ValidateDelete(_ context.Context, pod *corev1.Pod) (webhook.Warnings, error) {
	p.calls = append(p.calls, "delete "+pod.Name)
	return nil, nil
}

func (p *podPolicy) Default(_ context.Context, pod *corev1.Pod) error {
	p.calls = append(p.calls, "default "+pod.Name)
	if pod.Labels["team"] == "bad" {
		return errors.New("bad team")
	}
	if pod.Spec.RestartPolicy == "" {
		pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	return nil
}

func podJSON(name, team, restart string) runtime.RawExtension {
	pod := corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
	if team != "" {
		pod.Labels = map[string]string{"team": team}
	}
	pod.Spec.RestartPolicy = corev1.RestartPolicy(restart)
	raw, _ := json.Marshal(&pod)
	return runtime.RawExtension{Raw: raw}
}

// review posts a v1 review of req to url over HTTPS and returns the answer.
func review(t *testing.T, s *webhooktest.Server, path string, req admissionv1.AdmissionRequest) admissionv1.AdmissionResponse {
	t.Helper()
	req.UID = "uid-1"
	req.UserInfo.Username = "alice"
	body, _ := json.Marshal(admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: &req})
	resp, err := s.Client().Post(s.URL+path, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Response == nil {
		t.Fatalf("POST %s: status %d, decoding the answer: %v", path, resp.StatusCode, err)
	}
	return *out.Response
}

// summary is the part of an answer the tables check.
func summary(r admissionv1.AdmissionResponse) string {
	s := fmt.Sprintf("allowed=%v", r.Allowed)
	if r.Result != nil {
		s += fmt.Sprintf(" code=%d reason=%s message=%q", r.Result.Code, r.Result.Reason, r.Result.Message)
	}
	if len(r.Patch) > 0 {
		s += " patch=" + string(r.Patch)
	}
	if len(r.Warnings) > 0 {
		s += fmt.Sprintf(" warnings=%v", r.Warnings)
	}
	return s
}

func TestTypedHandlersOverHTTPS(t *testing.T) {
	policy := &podPolicy{}
	mux := http.NewServeMux()
	mux.Handle("/validate", webhook.Serve(webhook.WithValidator[*corev1.Pod](policy)))
	mux.Handle("/default", webhook.Serve(webhook.WithDefaulter[*corev1.Pod](policy)))
	s := webhooktest.Start(t, mux)
	cm := runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)}

	cases := []struct {
		name, path string
		req        admissionv1.AdmissionRequest
		want       string
		wantCalls  []string
	}{
		{"create allowed", "/validate", admissionv1.AdmissionRequest{Operation: admissionv1.Create, Object: podJSON("web", "a", "")},
			`allowed=true warnings=[checked]`, []string{"create web by alice"}},
		{"create denied", "/validate", admissionv1.AdmissionRequest{Operation: admissionv1.Create, Object: podJSON("web", "", "")},
			`allowed=false code=0 reason= message="pods need a team label" warnings=[no team]`, []string{"create web by alice"}},
		{"update with a status error", "/validate", admissionv1.AdmissionRequest{Operation: admissionv1.Update, Object: podJSON("web", "b", ""), OldObject: podJSON("web", "a", "")},
			`allowed=false code=403 reason=Forbidden message="pods \"web\" is forbidden: team is immutable"`, []string{"update a->b"}},
		{"delete reads the old object", "/validate", admissionv1.AdmissionRequest{Operation: admissionv1.Delete, OldObject: podJSON("old", "a", "")},
			`allowed=true`, []string{"delete old"}},
		{"connect is not validated", "/validate", admissionv1.AdmissionRequest{Operation: admissionv1.Connect},
			`allowed=true`, nil},
		{"another kind", "/validate", admissionv1.AdmissionRequest{Operation: admissionv1.Create, Object: cm},
			`allowed=false code=400 reason= message="object is /v1, Kind=ConfigMap, not the type decoded into (*v1.Pod)"`, nil},
		{"default patches the change", "/default", admissionv1.AdmissionRequest{Operation: admissionv1.Create, Object: podJSON("web", "a", "")},
			`allowed=true patch=[{"op":"add","path":"/spec/restartPolicy","value":"Always"}]`, []string{"default web"}},
		{"default without a change", "/default", admissionv1.AdmissionRequest{Operation: admissionv1.Update, Object: podJSON("web", "a", "Never"), OldObject: podJSON("web", "a", "Never")},
			`allowed=true`, []string{"default web"}},
		{"default error", "/default", admissionv1.AdmissionRequest{Operation: admissionv1.Create, Object: podJSON("web", "bad", "")},
			`allowed=false code=0 reason= message="bad team"`, []string{"default web"}},
		{"delete is not defaulted", "/default", admissionv1.AdmissionRequest{Operation: admissionv1.Delete, OldObject: podJSON("web", "a", "")},
			`allowed=true`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			policy.calls = nil
			if got := summary(review(t, s, tc.path, tc.req)); got != tc.want {
				t.Errorf("answer = %s, want %s", got, tc.want)
			}
			if !reflect.DeepEqual(policy.calls, tc.wantCalls) {
				t.Errorf("calls = %v, want %v", policy.calls, tc.wantCalls)
			}
		})
	}
}
