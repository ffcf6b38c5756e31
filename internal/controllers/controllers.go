// Package controllers holds the reconcilers that a cluster runs beside its
// API server and that clients count on: the garbage collector
// (ownerReferences and the orphan/foregroundDeletion finalizers), the
// service-account controller (a "default" ServiceAccount in every
// namespace), the namespace controller (empties and finalizes a deleted
// namespace), the ValidatingAdmissionPolicy status controller, the PVC and
// PV protection controllers (release deleted volumes no longer in use), CA
// injection (a write step of the API server and the refresh that follows a
// Secret; see cainjection.go), and kube-apiserver's own: the APIServices'
// registration and availability (apiservices*.go) and the
// extension-apiserver-authentication ConfigMap (authtrust.go).
//
// Each controller follows storage through a watch, so it sees every change
// whatever made it (the CA refresh is called by the server's write
// observers instead), and writes through the API server's loopback client as
// its own user, so admission, validation and audit see its requests as
// upstream's kube-controller-manager's. It is not a general controller
// framework: the workload controllers (internal/controllers/<workload>)
// and the simulated nodes read decoded objects from one shared watch cache
// per resource (Caches, watchcache), the informers of client-go without
// the API round trip; the controllers of this package follow storage keys
// themselves.
package controllers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	sigsjson "sigs.k8s.io/json"

	"github.com/admitd/admitd/pkg/storage"
)

// ControllerUser is the user a controller of kube-controller-manager acts
// as with --use-service-account-credentials (kind, kubeadm).
func ControllerUser(name string) authenticationv1.UserInfo {
	return authenticationv1.UserInfo{
		Username: "system:serviceaccount:kube-system:" + name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"},
	}
}

// NewClient returns a dynamic client that sends its requests through rt
// (the API server's loopback transport), without client-side rate limits.
func NewClient(rt http.RoundTripper) (dynamic.Interface, error) {
	return dynamic.NewForConfigAndClient(loopbackConfig(), &http.Client{Transport: userAgentTransport{rt}})
}

// loopbackConfig is the client configuration of the controllers' clients:
// the loopback host, no client-side rate limit. Its UserAgent only spares
// client-go from working out its default for every group version's client
// (the requests' User-Agent is userAgentTransport's or the caller's: the
// transport is ours, not one client-go builds from the configuration).
// Warnings the server gives the controllers (v1 Endpoints is deprecated,
// on every write of the endpoints controller) are not logged: they are
// addressed to the controllers' authors, which is the server itself.
func loopbackConfig() *rest.Config {
	return &rest.Config{Host: "http://loopback", QPS: -1, UserAgent: userAgent, WarningHandler: rest.NoWarnings{}}
}

// userAgent is the User-Agent of the controllers' requests:
// kube-controller-manager's, whose first word names the managedFields
// entries of their writes.
const userAgent = "kube-controller-manager"

// userAgentTransport sets the User-Agent (client-go sets it only on the
// transports it builds itself).
type userAgentTransport struct{ rt http.RoundTripper }

func (u userAgentTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("User-Agent") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("User-Agent", userAgent)
	}
	return u.rt.RoundTrip(r)
}

// stored is the part of a stored object the controllers read (decoding
// only this keeps the cost of following every write low).
type stored struct {
	Metadata storedMetadata `json:"metadata"`
	Status   struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

type storedMetadata struct {
	Name              string                  `json:"name"`
	Namespace         string                  `json:"namespace"`
	UID               types.UID               `json:"uid"`
	OwnerReferences   []metav1.OwnerReference `json:"ownerReferences"`
	Finalizers        []string                `json:"finalizers"`
	DeletionTimestamp *metav1.Time            `json:"deletionTimestamp"`
}

func decodeStored(value []byte) (*stored, error) {
	var s stored
	if scanStored(value, &s) {
		return &s, nil
	}
	s = stored{}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(value, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// runQueue follows the keys under prefix into f, and syncs every key f
// queues until ctx ends, when the queue shuts down. retry and keyName word
// the log line of a failed sync.
func runQueue(ctx context.Context, store storage.Store, prefix string, f follower, queue workqueue.TypedRateLimitingInterface[string],
	sync func(context.Context, string) error, log *slog.Logger, retry, keyName string) {
	go func() {
		<-ctx.Done()
		queue.ShutDown()
	}()
	go follow(ctx, store, prefix, f, log)
	parkWithReserve(func() {
		for processNext(ctx, queue, sync, log, retry, keyName) {
		}
	})
}

// ProcessNext takes the next key of queue and syncs it: a failure (unless
// ctx has ended) is logged as msg with the key under keyName, at
// failedSyncLevel, and the key comes back rate-limited; a success forgets
// its failures. False when the queue has shut down.
func ProcessNext(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string], sync func(context.Context, string) error, log *slog.Logger, msg, keyName string) bool {
	return processNext(ctx, queue, sync, log, msg, keyName)
}

func processNext(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string], sync func(context.Context, string) error, log *slog.Logger, msg, keyName string) bool {
	key, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(key)
	if err := sync(ctx, key); err != nil && ctx.Err() == nil {
		log.Log(ctx, failedSyncLevel(err), msg, keyName, key, "err", err)
		queue.AddRateLimited(key)
		return true
	}
	queue.Forget(key)
	return true
}

// failedSyncLevel is the level a failed sync is logged at: a write the
// server refused (authorization, admission: a policy, a webhook, a quota)
// is a warning, as it is what breaks a cluster silently when a policy is
// too broad (kube-controller-manager logs every failed sync as an error);
// other failures (a conflict, the server shutting down) wait for the retry
// at debug level.
func failedSyncLevel(err error) slog.Level {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return slog.LevelDebug
	}
	switch code := status.Status().Code; {
	case code == http.StatusConflict || code == http.StatusNotFound || code == http.StatusTooManyRequests:
		return slog.LevelDebug
	case code >= 400 && code < 500:
		return slog.LevelWarn
	}
	return slog.LevelDebug
}

// updateRead writes obj back through client; the update is conditional on
// the version read, and a conflict (or the object gone) waits for the event
// that follows.
func updateRead(ctx context.Context, client dynamic.ResourceInterface, obj runtime.Object) error {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	_, err = client.Update(ctx, &unstructured.Unstructured{Object: content}, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// follower receives the state of a key prefix: every item once (reset),
// then each change.
type follower interface {
	reset(items []storage.KeyValue)
	event(ev storage.Event)
}

// follow lists prefix and then watches it from the listed revision, until
// ctx ends; when the watch fails (compaction, a slow consumer) it lists
// again.
func follow(ctx context.Context, store storage.Store, prefix string, f follower, log *slog.Logger) {
	for ctx.Err() == nil {
		err := followOnce(ctx, store, prefix, f)
		if ctx.Err() != nil {
			return
		}
		if err != nil && !errors.Is(err, storage.ErrClosed) {
			log.Warn("watching storage, relisting", "prefix", prefix, "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func followOnce(ctx context.Context, store storage.Store, prefix string, f follower) error {
	page, err := store.List(ctx, prefix, storage.ListOptions{})
	if err != nil {
		return err
	}
	f.reset(page.Items)
	w, err := store.Watch(ctx, prefix, page.Revision)
	if err != nil {
		return err
	}
	defer w.Stop()
	for ev := range w.Events() {
		f.event(ev)
	}
	return w.Err()
}

// Follower receives the state of a key prefix for the controllers of
// other packages (internal/controllers/<workload>): every item once
// (Reset, again after a relist), then each change (Event).
type Follower interface {
	Reset(items []storage.KeyValue)
	Event(ev storage.Event)
}

// Follow lists prefix and watches it into f until ctx ends, listing again
// when the watch fails, as the controllers of this package follow
// storage.
func Follow(ctx context.Context, store storage.Store, prefix string, f Follower, log *slog.Logger) {
	follow(ctx, store, prefix, exportedFollower{f}, log)
}

type exportedFollower struct{ f Follower }

func (e exportedFollower) reset(items []storage.KeyValue) { e.f.Reset(items) }
func (e exportedFollower) event(ev storage.Event)         { e.f.Event(ev) }
