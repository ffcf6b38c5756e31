package evaluate

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Session is an in-process server with a configuration, to which many
// requests are sent one after the other: the evaluation of `admitd audit`
// and `admitd replay`. Unlike Run, the objects requests act on can be put
// in without admission (Preload, Place), as objects that were there
// before the configuration, and taken out again (Release, Remove), so
// that a stream of objects need not be held. Objects are put in,
// evaluated and taken out from several goroutines at once.
type Session struct {
	inst      *instance
	c         *cluster
	responder *responder
	// preload writes without admission.
	preload dynamic.Interface
}

// SessionInput is what a session starts with.
type SessionInput struct {
	// Objects are created as Run creates Input.Objects: through
	// admission, configurations last.
	Objects   []Object
	Responses Responses
	Server    ServerConfig
}

// StartSession starts a server and creates in.Objects. The server has no
// garbage collector (preloaded objects keep owner references to owners
// that are not there) and no root CA publisher (a preloaded
// kube-root-ca.crt keeps the cluster's CA).
func StartSession(ctx context.Context, in SessionInput) (s *Session, err error) {
	s = &Session{}
	defer func() {
		if err != nil {
			_ = s.Close()
		}
	}()
	var objects []Object
	if objects, s.responder, err = prepareWebhooks(in.Objects, in.Responses, in.Server); err != nil {
		return nil, err
	}
	cfg := in.Server
	cfg.copiedObjects = true
	if s.inst, err = startServer(ctx, cfg, nil); err != nil {
		return nil, err
	}
	if s.c, err = s.inst.cluster(); err != nil {
		return nil, err
	}
	pc := rest.CopyConfig(&rest.Config{Host: s.inst.admin.Host, QPS: -1, UserAgent: "admitd-audit-preload"})
	pc.Transport = s.inst.srv.PreloadTransport()
	if s.preload, err = dynamic.NewForConfig(pc); err != nil {
		return nil, err
	}
	return s, s.c.seed(ctx, objects)
}

// SetupWarnings are the warnings the server gave while the session's
// objects were created.
func (s *Session) SetupWarnings() []string { return s.c.setupWarnings.list() }

// Preload creates u (or replaces the object of that name), and then its
// status, without admission, and returns the object stored. Errors are
// the server's refusals (an object it does not serve or finds invalid) as
// *ConfigError.
func (s *Session) Preload(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	_, stored, err := s.place(ctx, u)
	return stored, err
}

// Remove deletes the object of u's kind and name without admission,
// removing the finalizers that would keep it, whether or not it was there
// before Preload: a recorded DELETE that `admitd replay` follows.
func (s *Session) Remove(ctx context.Context, u *unstructured.Unstructured) error {
	obj := u.DeepCopy()
	gvr, err := s.c.target(obj, Request{})
	if err != nil {
		return err
	}
	return s.remove(ctx, gvr, obj)
}

func (s *Session) remove(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
	ri := on(s.preload, gvr, obj)
	cur, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(cur.GetFinalizers()) > 0 {
		cur.SetFinalizers(nil)
		if _, err := ri.Update(ctx, cur, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	if err := ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// Evaluate sends q (CREATE or UPDATE; an UPDATE replaces the stored
// object) as the administrator, or q.User, and returns what it got. A
// CREATE's object is sent without the metadata a server sets.
func (s *Session) Evaluate(ctx context.Context, q Request) (*Result, error) {
	q.Impersonator = nil
	if err := checkRequest(&q); err != nil {
		return nil, err
	}
	if q.Operation == Create {
		q.Object = q.Object.DeepCopy()
		clearServerSet(q.Object)
	}
	if q.Operation == Connect {
		return nil, &ConfigError{Err: errors.New("a session evaluates no CONNECT")}
	}
	ans, err := s.c.send(ctx, s.inst, q)
	if err != nil {
		return nil, err
	}
	t, err := fetchTrace(ctx, s.inst.admin, ans.auditID, traceWait(ans))
	if err != nil {
		return nil, err
	}
	return result(q, ans, t), nil
}

// Close stops the server and the responder.
func (s *Session) Close() error {
	var err error
	if s.inst != nil {
		err = s.inst.close()
	}
	if s.responder != nil {
		s.responder.close()
	}
	return err
}

// KindFor is the kind the server serves at resource gvr.
func (s *Session) KindFor(gvr schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	gvk, err := s.c.mapper.KindFor(gvr)
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("the server does not serve %s", gvr)
	}
	return gvk, nil
}

// AwaitCRD waits until the CustomResourceDefinition preloaded as u is
// established and its kinds are served.
func (s *Session) AwaitCRD(ctx context.Context, u *unstructured.Unstructured) error {
	return s.c.awaitCRDs(ctx, []Object{{Unstructured: u, Source: "a preloaded CustomResourceDefinition"}})
}
