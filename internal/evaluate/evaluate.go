// Package evaluate runs one admission request offline: it starts a
// throwaway admitd in the process (memory storage, 127.0.0.1, the same
// server code as `admitd serve`, so the same compiled-in plugins, policies
// and webhooks in the same order), creates the configuration and the
// objects the request needs, sends the request as a client would and reads
// back the answer, the final object, the warnings, the audit annotations
// and the admission trace. It is the logic of `admitd eval` and, through
// RunSuite, of `admitd test`.
//
// It is not a simulator: webhooks are called for real (URL webhooks), or
// answered from recorded responses (Responses) by a local HTTPS responder
// the webhook configurations are pointed at. Nothing of the evaluation is
// kept: the server and its storage go away with it.
package evaluate

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/admitd/admitd/pkg/admission/trace"
)

// Operations a request may have.
const (
	Create  = "CREATE"
	Update  = "UPDATE"
	Delete  = "DELETE"
	Connect = "CONNECT"
)

// Input is everything one evaluation needs.
type Input struct {
	// Objects exist before the request: created in the order CRDs,
	// namespaces, other objects, admission configurations (policies, then
	// bindings), by an administrator, through admission as on a server,
	// before any webhook configuration or policy of Objects exists.
	Objects []Object
	// Request is the request under evaluation.
	Request Request
	// Responses answer webhooks without calling them (nil: none).
	Responses Responses
	// Server configures the in-process server.
	Server ServerConfig
}

// Object is an object read from a file, with where it came from.
type Object struct {
	*unstructured.Unstructured
	Source string
}

// Request is the API request to evaluate.
type Request struct {
	// Operation is CREATE (default), UPDATE, DELETE or CONNECT.
	Operation string
	// Object is the object created or the new object of an UPDATE; for a
	// DELETE, the object deleted (only its kind, name and namespace
	// count): the stored one, from Objects or OldObject. For a CONNECT it
	// is the options object (PodExecOptions, PodAttachOptions,
	// PodPortForwardOptions, PodProxyOptions, NodeProxyOptions,
	// ServiceProxyOptions), sent as the query of the request.
	Object *unstructured.Unstructured
	// Name is the name of the object a CONNECT connects to (a pod, node
	// or service); other operations name it in Object.
	Name string
	// Resource, when set, is where the request goes (needed when the
	// object's kind is not the resource's, as a pods/binding create);
	// else the resource that serves Object's kind.
	Resource *schema.GroupVersionResource
	// OldObject, when set, is created before the request: the stored
	// object an UPDATE replaces or a DELETE deletes.
	OldObject *unstructured.Unstructured
	// Subresource is the subresource written (status, scale, ...), or
	// connected to (exec, attach, portforward, proxy: by default the one
	// of the options kind).
	Subresource string
	// Namespace overrides the object's namespace.
	Namespace string
	// User is who the request acts as: impersonated by Impersonator;
	// empty: the administrator, a member of system:masters.
	User User
	// Impersonator, when set, is who sends the request: a user the
	// server authenticates (by a bearer token eval makes for it) and
	// who impersonates User, whose groups and extra are then sent as
	// Impersonate-Group and Impersonate-Extra headers and must be allowed
	// to it; nil: the administrator impersonates User. It has no extra
	// (a token file cannot give any).
	Impersonator *User
	// DryRun sends the request as a dry run (then the trace is verbose:
	// every webhook and policy, each skipped one with its reason).
	DryRun bool
	// Options are the CreateOptions, UpdateOptions or DeleteOptions, as
	// JSON fields (fieldManager, propagationPolicy, ...).
	Options map[string]any
	// Patch, for an UPDATE, is sent as a PATCH of PatchType to the stored
	// object that Object names (the PATCH admission sees as an UPDATE);
	// Options are then PatchOptions.
	Patch     []byte
	PatchType types.PatchType
}

// User is a request's identity.
type User struct {
	Name   string              `json:"name,omitempty"`
	UID    string              `json:"uid,omitempty"`
	Groups []string            `json:"groups,omitempty"`
	Extra  map[string][]string `json:"extra,omitempty"`
}

// Result is what the request got.
type Result struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Allowed is true when the request succeeded (a CONNECT: when
	// admission admitted it).
	Allowed bool `json:"allowed"`
	// Decision is the trace's: Allowed, Denied (by admission) or Error
	// (admitted, then refused: an invalid object, a conflict).
	Decision string `json:"decision"`
	// Status is the Status of a refused request.
	Status *metav1.Status `json:"status,omitempty"`
	// Object is the object stored (CREATE, UPDATE; nil for DELETE and
	// CONNECT).
	Object map[string]any `json:"object,omitempty"`
	// Connection is, for a CONNECT that admission admitted, the server's
	// answer after admission: eval opens no stream, so it is the error of
	// the step that follows (the pod not found or not scheduled,
	// "Upgrade request required", no kubelet reachable). Allowed is true
	// and Status nil: the request was not refused by admission.
	Connection *metav1.Status `json:"connection,omitempty"`
	// Warnings are the Warning headers of the response.
	Warnings []string `json:"warnings"`
	// AuditAnnotations are the request's admission audit annotations.
	AuditAnnotations map[string]string `json:"auditAnnotations"`
	// SetupWarnings are the warnings the server gave while the objects
	// given were created (lint findings on configurations, deprecations).
	SetupWarnings []string `json:"setupWarnings,omitempty"`
	// Trace is the request's admission trace.
	Trace *trace.Trace `json:"trace,omitempty"`
	// CreatedByControllers are the creates the workload controllers sent
	// because of the request (ServerConfig.ExpandWorkloads).
	CreatedByControllers []ControllerRequest `json:"createdByControllers,omitempty"`
	// sent is the object as sent, for the diff of the tree output.
	sent *unstructured.Unstructured
}

// APIVersion and Kind of a Result's JSON and YAML form.
const (
	ResultAPIVersion = "eval.admitd.io/v1alpha1"
	ResultKind       = "Evaluation"
)
