package samplewebhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/webhook"
)

// The patches upstream sends, byte for byte (k8s.io/kubernetes/test/images/agnhost/webhook/addlabel.go,
// configmap.go, customresource.go, pods.go).
const (
	patchLabelFirst   = "[\n         { \"op\": \"add\", \"path\": \"/metadata/labels\", \"value\": {\"added-label\": \"yes\"}}\n     ]"
	patchLabelAdd     = "[\n         { \"op\": \"add\", \"path\": \"/metadata/labels/added-label\", \"value\": \"yes\" }\n     ]"
	patchLabelReplace = "[\n         { \"op\": \"replace\", \"path\": \"/metadata/labels/added-label\", \"value\": \"yes\" }\n     ]"
	patchStage1       = "[\n         { \"op\": \"add\", \"path\": \"/data/mutation-stage-1\", \"value\": \"yes\" }\n     ]"
	patchStage2       = "[\n         { \"op\": \"add\", \"path\": \"/data/mutation-stage-2\", \"value\": \"yes\" }\n     ]"
	patchInit         = "[\n\t\t {\"op\":\"add\",\"path\":\"/spec/initContainers\",\"value\":[{\"image\":\"webhook-added-image\",\"name\":\"webhook-added-init-container\",\"resources\":{}}]}\n\t]"
	// The image is pasted in without JSON escaping, as upstream does.
	patchSidecarFormat = "[\n\t\t{\"op\":\"add\", \"path\":\"/spec/containers/-\",\"value\":{\"image\":\"%v\",\"name\":\"webhook-added-sidecar\",\"resources\":{}}}\n\t]"
)

var (
	podResource       = metav1.GroupVersionResource{Version: "v1", Resource: "pods"}
	configMapResource = metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	crdResourceV1     = metav1.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crdResourceV1beta = metav1.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1beta1", Resource: "customresourcedefinitions"}
)

// endpoints are the admission endpoints; each method is one path.
type endpoints struct {
	cfg Config
	log *slog.Logger
}

// deny answers err's text as status.message, as upstream's
// toV1AdmissionResponse does.
func (e *endpoints) deny(err error) webhook.Response {
	e.log.Error("denying the request", "error", err)
	return webhook.Denied(err.Error())
}

// abort sends no answer: upstream dereferences a nil response here.
func abort() {
	panic(http.ErrAbortHandler)
}

// ignoreNoObject treats an absent object as an empty one, as upstream's
// typed decoding does.
func ignoreNoObject(err error) error {
	if errors.Is(err, webhook.ErrNoObject) {
		return nil
	}
	return err
}

func (e *endpoints) alwaysAllowDelay(ctx context.Context, _ webhook.Request) webhook.Response {
	e.log.Debug("always-allow-with-delay sleeping for 5 seconds")
	sleep(ctx, e.cfg.delay)
	e.log.Debug("calling always-allow")
	return webhook.Allowed("this webhook allows all requests")
}

func (e *endpoints) alwaysDeny(context.Context, webhook.Request) webhook.Response {
	e.log.Debug("calling always-deny")
	return webhook.Denied("this webhook denies all requests")
}

func (e *endpoints) addLabel(_ context.Context, req webhook.Request) webhook.Response {
	e.log.Debug("calling add-label")
	var obj struct {
		metav1.ObjectMeta `json:"metadata,omitempty"`
	}
	if err := json.Unmarshal(req.Object.Raw, &obj); err != nil {
		return e.deny(err)
	}
	value, has := obj.Labels["added-label"]
	switch {
	case len(obj.Labels) == 0:
		return webhook.PatchedJSON([]byte(patchLabelFirst))
	case !has:
		return webhook.PatchedJSON([]byte(patchLabelAdd))
	case value != "yes":
		return webhook.PatchedJSON([]byte(patchLabelReplace))
	}
	return webhook.Allowed("")
}

func (e *endpoints) pods(ctx context.Context, req webhook.Request) webhook.Response {
	e.log.Debug("admitting pods")
	if req.Resource != podResource {
		return e.deny(fmt.Errorf("expect resource to be %s", podResource))
	}
	var pod corev1.Pod
	if err := ignoreNoObject(req.DecodeObject(&pod)); err != nil {
		return e.deny(err)
	}
	allowed, msg := true, ""
	if v, ok := pod.Labels["webhook-e2e-test"]; ok {
		switch v {
		case "webhook-disallow":
			allowed, msg = false, msg+"the pod contains unwanted label; "
		case "wait-forever":
			<-ctx.Done() // upstream never answers; the caller times out
			abort()
		}
	}
	for _, c := range pod.Spec.Containers {
		if strings.Contains(c.Name, "webhook-disallow") {
			allowed, msg = false, msg+"the pod contains unwanted container name; "
		}
	}
	if !allowed {
		return webhook.Denied(strings.TrimSpace(msg))
	}
	return webhook.Allowed("")
}

func (e *endpoints) podsAttach(_ context.Context, req webhook.Request) webhook.Response {
	e.log.Debug("handling attaching pods")
	if req.Name != "to-be-attached-pod" {
		return webhook.Allowed("")
	}
	if req.Resource != podResource {
		return e.deny(fmt.Errorf("expect resource to be %s, got %s", podResource, req.Resource))
	}
	if req.SubResource != "attach" {
		return e.deny(fmt.Errorf("expect subresource to be attach, got %s", req.SubResource))
	}
	var opts corev1.PodAttachOptions
	if err := ignoreNoObject(req.DecodeObject(&opts)); err != nil {
		return e.deny(err)
	}
	e.log.Debug("podAttachOptions", "stdin", opts.Stdin, "container", opts.Container)
	if opts.Stdin && opts.Container == "container1" {
		return webhook.Denied("attaching to pod 'to-be-attached-pod' is not allowed")
	}
	return webhook.Allowed("")
}

func (e *endpoints) mutatingPods(_ context.Context, req webhook.Request) webhook.Response {
	e.log.Debug("mutating pods")
	if req.Resource != podResource {
		abort()
	}
	var pod corev1.Pod
	if err := ignoreNoObject(req.DecodeObject(&pod)); err != nil {
		return e.deny(err)
	}
	if pod.Name == "webhook-to-be-mutated" && !hasContainer(pod.Spec.InitContainers, "webhook-added-init-container") {
		return webhook.PatchedJSON([]byte(patchInit))
	}
	return webhook.Allowed("")
}

func (e *endpoints) mutatingPodsSidecar(_ context.Context, req webhook.Request) webhook.Response {
	e.log.Debug("mutating pods")
	if e.cfg.SidecarImage == "" {
		return webhook.Errored(http.StatusInternalServerError, errors.New("No image specified by the sidecar-image parameter"))
	}
	if req.Resource != podResource {
		abort()
	}
	var pod corev1.Pod
	if err := ignoreNoObject(req.DecodeObject(&pod)); err != nil {
		return e.deny(err)
	}
	if !hasContainer(pod.Spec.Containers, "webhook-added-sidecar") {
		return webhook.PatchedJSON(fmt.Appendf(nil, patchSidecarFormat, e.cfg.SidecarImage))
	}
	return webhook.Allowed("")
}

func hasContainer(containers []corev1.Container, name string) bool {
	for _, c := range containers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// Denial reasons of the configmap and custom resource endpoints; they go in
// status.reason, not status.message.
const (
	reasonConfigMapData      = "the configmap contains unwanted key and value"
	reasonConfigMapDelete    = "the configmap cannot be deleted because it contains unwanted key and value"
	reasonCustomResourceData = "the custom resource contains unwanted data"
	reasonCustomResourceDel  = "the custom resource cannot be deleted because it contains unwanted key and value"
)

func (e *endpoints) configmaps(_ context.Context, req webhook.Request) webhook.Response {
	e.log.Debug("admitting configmaps")
	if req.Resource != configMapResource {
		abort()
	}
	decode := req.DecodeObject
	if req.Operation == admissionv1.Delete {
		decode = req.DecodeOldObject
	}
	var cm corev1.ConfigMap
	if err := ignoreNoObject(decode(&cm)); err != nil {
		return e.deny(err)
	}
	return judgeData(req.Operation, cm.Data, reasonConfigMapData, reasonConfigMapDelete)
}

// judgeData denies writing the value webhook-disallow and deleting the value
// webhook-nondeletable of the key webhook-e2e-test, with a reason.
func judgeData(op admissionv1.Operation, data map[string]string, writeReason, deleteReason metav1.StatusReason) webhook.Response {
	v, ok := data["webhook-e2e-test"]
	switch {
	case ok && v == "webhook-disallow" && (op == admissionv1.Create || op == admissionv1.Update):
		return webhook.DeniedWithCode(0, writeReason, "")
	case ok && v == "webhook-nondeletable" && op == admissionv1.Delete:
		return webhook.DeniedWithCode(0, deleteReason, "")
	}
	return webhook.Allowed("")
}

func (e *endpoints) mutatingConfigmaps(_ context.Context, req webhook.Request) webhook.Response {
	e.log.Debug("mutating configmaps")
	if req.Resource != configMapResource {
		abort()
	}
	var cm corev1.ConfigMap
	if err := ignoreNoObject(req.DecodeObject(&cm)); err != nil {
		return e.deny(err)
	}
	return nextStage(cm.Data)
}

// nextStage moves the data one mutation stage on.
func nextStage(data map[string]string) webhook.Response {
	var patch string
	if data["mutation-start"] == "yes" {
		patch = patchStage1
	}
	if data["mutation-stage-1"] == "yes" {
		patch = patchStage2
	}
	return webhook.PatchedJSON([]byte(patch))
}

// looseData decodes raw as upstream's custom resource endpoints do, with
// encoding/json into a struct that embeds the object metadata at the top
// level: keys match case-insensitively, an absent object is an error, and a
// non-string data value denies.
func looseData(raw []byte) (map[string]string, error) {
	var cr struct {
		metav1.ObjectMeta
		Data map[string]string
	}
	err := json.Unmarshal(raw, &cr)
	return cr.Data, err
}

func (e *endpoints) customResource(_ context.Context, req webhook.Request) webhook.Response {
	e.log.Debug("admitting custom resource")
	raw := req.Object.Raw
	if req.Operation == admissionv1.Delete {
		raw = req.OldObject.Raw
	}
	data, err := looseData(raw)
	if err != nil {
		return e.deny(err)
	}
	return judgeData(req.Operation, data, reasonCustomResourceData, reasonCustomResourceDel)
}

func (e *endpoints) mutatingCustomResource(_ context.Context, req webhook.Request) webhook.Response {
	e.log.Debug("mutating custom resource")
	data, err := looseData(req.Object.Raw)
	if err != nil {
		return e.deny(err)
	}
	return nextStage(data)
}

func (e *endpoints) crd(_ context.Context, req webhook.Request) webhook.Response {
	e.log.Debug("admitting crd")
	if req.Resource != crdResourceV1 && req.Resource != crdResourceV1beta {
		return e.deny(fmt.Errorf("expect resource to be one of [%s, %s] but got %s", crdResourceV1beta, crdResourceV1, req.Resource))
	}
	// Only the labels matter; CRD types are not in the decoding scheme, so
	// the JSON is decoded directly, as upstream does.
	var crd metav1.PartialObjectMetadata
	if err := ignoreNoObject(req.DecodeObject(&crd)); err != nil {
		return e.deny(err)
	}
	if crd.Labels["webhook-e2e-test"] == "webhook-disallow" {
		return webhook.Denied("the crd contains unwanted label")
	}
	return webhook.Allowed("")
}
