package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/webhook"
)

// Two versions of kind Endpoint: v1 (host and port) converts through the
// hub v2 (address).
var (
	endpointV1GV = schema.GroupVersion{Group: "net.example.com", Version: "v1"}
	endpointV2GV = schema.GroupVersion{Group: "net.example.com", Version: "v2"}
	endpointV3GV = schema.GroupVersion{Group: "net.example.com", Version: "v3"}
)

type EndpointV1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Host string `json:"host"`
		Port int    `json:"port"`
	} `json:"spec"`
}

type EndpointV2 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Address string `json:"address"`
	} `json:"spec"`
}

// EndpointV3 is v2 under another field name, to test spoke to spoke.
type EndpointV3 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Target string `json:"target"`
	} `json:"spec"`
}

func (e *EndpointV1) DeepCopyObject() runtime.Object {
	c := *e
	e.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}
func (e *EndpointV2) DeepCopyObject() runtime.Object {
	c := *e
	e.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}
func (e *EndpointV3) DeepCopyObject() runtime.Object {
	c := *e
	e.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

func (*EndpointV2) Hub() {}

func (e *EndpointV1) ConvertTo(dst webhook.Hub) error {
	hub := dst.(*EndpointV2)
	hub.ObjectMeta = e.ObjectMeta
	hub.Spec.Address = net.JoinHostPort(e.Spec.Host, strconv.Itoa(e.Spec.Port))
	return nil
}

func (e *EndpointV1) ConvertFrom(src webhook.Hub) error {
	hub := src.(*EndpointV2)
	host, port, err := net.SplitHostPort(hub.Spec.Address)
	if err != nil {
		return fmt.Errorf("spec.address: %w", err)
	}
	e.ObjectMeta = hub.ObjectMeta
	e.Spec.Host = host
	e.Spec.Port, err = strconv.Atoi(port)
	return err
}

func (e *EndpointV3) ConvertTo(dst webhook.Hub) error {
	hub := dst.(*EndpointV2)
	hub.ObjectMeta, hub.Spec.Address = e.ObjectMeta, e.Spec.Target
	return nil
}

func (e *EndpointV3) ConvertFrom(src webhook.Hub) error {
	hub := src.(*EndpointV2)
	e.ObjectMeta, e.Spec.Target = hub.ObjectMeta, hub.Spec.Address
	return nil
}

func endpointScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	s.AddKnownTypeWithName(endpointV1GV.WithKind("Endpoint"), &EndpointV1{})
	s.AddKnownTypeWithName(endpointV2GV.WithKind("Endpoint"), &EndpointV2{})
	s.AddKnownTypeWithName(endpointV3GV.WithKind("Endpoint"), &EndpointV3{})
	return s
}

// conversionReview posts a ConversionReview of version apiVersion and returns the
// HTTP code and decoded answer.
func conversionReview(t *testing.T, h http.Handler, apiVersion, desired string, objects ...string) (int, map[string]any) {
	t.Helper()
	var raw []json.RawMessage
	for _, o := range objects {
		raw = append(raw, json.RawMessage(o))
	}
	body, _ := json.Marshal(map[string]any{"apiVersion": apiVersion, "kind": "ConversionReview",
		"request": map[string]any{"uid": "u-1", "desiredAPIVersion": desired, "objects": raw}})
	req := httptest.NewRequest(http.MethodPost, "/convert", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

const v1Endpoint = `{"apiVersion":"net.example.com/v1","kind":"Endpoint","metadata":{"name":"db","uid":"1"},"spec":{"host":"db.local","port":5432}}`

func convertedSpecs(t *testing.T, answer map[string]any) []map[string]any {
	t.Helper()
	resp := answer["response"].(map[string]any)
	if resp["uid"] != "u-1" {
		t.Errorf("uid %v", resp["uid"])
	}
	if st := resp["result"].(map[string]any)["status"]; st != "Success" {
		t.Fatalf("result %v", resp["result"])
	}
	var out []map[string]any
	for _, o := range resp["convertedObjects"].([]any) {
		out = append(out, o.(map[string]any))
	}
	return out
}

func TestSchemeConverterConvertsThroughTheHub(t *testing.T) {
	h := webhook.ServeConversion(webhook.SchemeConverter(endpointScheme()))
	for _, tc := range []struct {
		desired, field, want string
	}{
		{"net.example.com/v2", "address", "db.local:5432"},
		{"net.example.com/v3", "target", "db.local:5432"},
	} {
		code, answer := conversionReview(t, h, "apiextensions.k8s.io/v1", tc.desired, v1Endpoint)
		if code != 200 || answer["apiVersion"] != "apiextensions.k8s.io/v1" {
			t.Fatalf("%d %v", code, answer)
		}
		obj := convertedSpecs(t, answer)[0]
		if obj["apiVersion"] != tc.desired || obj["spec"].(map[string]any)[tc.field] != tc.want {
			t.Errorf("converted to %s: %v", tc.desired, obj)
		}
		if obj["metadata"].(map[string]any)["name"] != "db" {
			t.Errorf("metadata lost: %v", obj)
		}
	}
	back := `{"apiVersion":"net.example.com/v3","kind":"Endpoint","metadata":{"name":"db"},"spec":{"target":"db.local:5432"}}`
	_, answer := conversionReview(t, h, "apiextensions.k8s.io/v1beta1", "net.example.com/v1", back)
	if answer["apiVersion"] != "apiextensions.k8s.io/v1beta1" {
		t.Errorf("answered in %v", answer["apiVersion"])
	}
	spec := convertedSpecs(t, answer)[0]["spec"].(map[string]any)
	if spec["host"] != "db.local" || spec["port"] != float64(5432) {
		t.Errorf("v3 to v1: %v", spec)
	}
}

func TestConversionErrorFailsTheReview(t *testing.T) {
	h := webhook.ServeConversion(webhook.SchemeConverter(endpointScheme()))
	bad := `{"apiVersion":"net.example.com/v2","kind":"Endpoint","metadata":{"name":"db"},"spec":{"address":"no-port"}}`
	_, answer := conversionReview(t, h, "apiextensions.k8s.io/v1", "net.example.com/v1", v1Endpoint, bad)
	resp := answer["response"].(map[string]any)
	result := resp["result"].(map[string]any)
	if result["status"] != "Failure" || result["message"] != "spec.address: address no-port: missing port in address" || resp["convertedObjects"] != nil {
		t.Errorf("answer %v", resp)
	}
	panicking := webhook.ServeConversion(webhook.ConverterFunc(func(context.Context, *unstructured.Unstructured, string) (*unstructured.Unstructured, error) {
		panic(errors.New("boom"))
	}))
	_, answer = conversionReview(t, panicking, "apiextensions.k8s.io/v1", "net.example.com/v2", v1Endpoint)
	if msg := answer["response"].(map[string]any)["result"].(map[string]any)["message"]; msg != "conversion webhook panicked: boom" {
		t.Errorf("panic answered %v", msg)
	}
}

func TestConversionHandlerRejectsWhatIsNotAReview(t *testing.T) {
	h := webhook.ServeConversion(webhook.SchemeConverter(endpointScheme()))
	for _, tc := range []struct {
		body, ct string
		code     int
	}{
		{`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}`, "application/json", 400},
		{`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}}`, "application/json", 400},
		{`not json`, "application/json", 400},
		{`{}`, "text/plain", 415},
	} {
		req := httptest.NewRequest(http.MethodPost, "/convert", bytes.NewReader([]byte(tc.body)))
		req.Header.Set("Content-Type", tc.ct)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.code {
			t.Errorf("%s: %d %s, want %d", tc.body, rec.Code, rec.Body, tc.code)
		}
	}
}
