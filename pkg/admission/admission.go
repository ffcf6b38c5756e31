// Package admission holds the contracts of the admission chain: the request
// Attributes every plugin sees, the Mutator and Validator interfaces, the Chain
// that runs plugins in order, and the per-request Record in which admission
// leaves its annotations, warnings and trace.
//
// It is a library: the API server builds Attributes and calls a Chain; it does
// not know which plugins run. Plugins live in sub-packages and never import
// the server. A Registry builds the Chain: it knows kube-apiserver's plugins
// in upstream order (plugins/standard registers those admitd has) and takes
// plugins of the caller's own, under any name, where the caller places them.
//
// It is not an API server: it reads no storage and serves no HTTP.
package admission

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Operation is the kind of write being admitted.
type Operation string

// The four operations admission sees. Reads are never admitted.
const (
	Create  Operation = "CREATE"
	Update  Operation = "UPDATE"
	Delete  Operation = "DELETE"
	Connect Operation = "CONNECT"
)

// Attributes describe one admission request. The server fills them; plugins
// read them, and mutating plugins may replace Object.
type Attributes struct {
	// Name is empty on CREATE when the client relies on generateName.
	Name      string
	Namespace string
	// Resource is the resource being written, in the version the request
	// addressed; Subresource is e.g. "status" or "exec".
	Resource    schema.GroupVersionResource
	Subresource string
	// Kind is the kind of Object (for a subresource, the subresource's kind).
	Kind      schema.GroupVersionKind
	Operation Operation
	// Options is the CreateOptions, UpdateOptions or DeleteOptions of the
	// request (nil for CONNECT).
	Options runtime.Object
	DryRun  bool
	// Object is the new object (nil for DELETE); OldObject the current one
	// (nil for CREATE and CONNECT).
	Object    runtime.Object
	OldObject runtime.Object
	UserInfo  authenticationv1.UserInfo

	// Record collects what admission did to this request. Never nil when
	// built by the server.
	Record *Record
}

// Handler is implemented by every plugin: it says which operations it cares
// about. A plugin also implements Mutator, Validator or both. Its answer
// for an operation must not change: a Chain asks once, when it is built.
type Handler interface {
	Handles(op Operation) bool
}

// Mutator is a plugin that may change the object being admitted.
type Mutator interface {
	Handler
	Admit(ctx context.Context, a *Attributes) error
}

// Validator is a plugin that may reject a request but never changes it.
type Validator interface {
	Handler
	Validate(ctx context.Context, a *Attributes) error
}

// Interface is what the API server calls: a (possibly empty) chain.
type Interface interface {
	Handler
	Mutator
	Validator
}
