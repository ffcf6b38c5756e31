package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// APIServiceAvailability is kube-aggregator's remote availability
// controller: the Available condition of every APIService that names a
// service is what Check says of it, written through the status
// subresource when it changes (its LastTransitionTime when its status
// does). An APIService is checked when it changes, when its Service or
// one of the Service's EndpointSlices changes, and every
// APIServiceResyncPeriod; a failed discovery check is retried with
// backoff. Local APIServices are left alone (a create marks them
// Available).
type APIServiceAvailability struct {
	store  storage.Store
	res    *registry.Resource
	client dynamic.ResourceInterface
	check  func(context.Context, *apiregistrationv1.APIService) apiregistrationv1.APIServiceCondition
	log    *slog.Logger
	queue  workqueue.TypedRateLimitingInterface[string]

	mu sync.Mutex
	// remote are the APIServices that name a service, by name.
	remote map[string]*apiregistrationv1.APIService
}

// APIServiceResyncPeriod is how often every remote APIService is checked
// again (upstream's informer resync), so that a server going away is
// noticed without any write.
const APIServiceResyncPeriod = 30 * time.Second

// availabilityWorkers check APIServices at once (a dead server holds a
// check for seconds).
const availabilityWorkers = 5

var (
	servicesPrefix       = layout.GroupPrefix("") + "services/"
	endpointSlicesPrefix = layout.GroupPrefix("discovery.k8s.io") + "endpointslices/"
)

// NewAPIServiceAvailability returns the controller; check is the
// aggregation layer's (aggregator.Check) and rt the loopback transport of
// the API server's own user, through which status is written.
func NewAPIServiceAvailability(store storage.Store, cat *registry.Catalogue, rt http.RoundTripper,
	check func(context.Context, *apiregistrationv1.APIService) apiregistrationv1.APIServiceCondition, log *slog.Logger) (*APIServiceAvailability, error) {
	client, err := newAPIServerClient(rt)
	if err != nil {
		return nil, err
	}
	res, _ := cat.Lookup(apiServicesGVR)
	return &APIServiceAvailability{store: store, res: res, client: client.Resource(apiServicesGVR), check: check, log: log,
		queue:  workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 30*time.Second)),
		remote: map[string]*apiregistrationv1.APIService{}}, nil
}

// Run keeps the conditions until ctx ends.
func (c *APIServiceAvailability) Run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		c.queue.ShutDown()
	}()
	go follow(ctx, c.store, apiServicesPrefix, apiServiceFollower{c}, c.log)
	go follow(ctx, c.store, servicesPrefix, serviceFollower{c}, c.log)
	go follow(ctx, c.store, endpointSlicesPrefix, sliceFollower{c}, c.log)
	go c.resync(ctx)
	var wg sync.WaitGroup
	for range availabilityWorkers {
		wg.Go(func() {
			for processNext(ctx, c.queue, c.sync, c.log, "checking an APIService will retry", "apiservice") {
			}
		})
	}
	wg.Wait()
}

func (c *APIServiceAvailability) resync(ctx context.Context) {
	t := time.NewTicker(APIServiceResyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.queueWhere(func(*apiregistrationv1.APIService) bool { return true })
		}
	}
}

// queueWhere queues the remote APIServices for which match holds.
func (c *APIServiceAvailability) queueWhere(match func(*apiregistrationv1.APIService) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, s := range c.remote {
		if match(s) {
			c.queue.Add(name)
		}
	}
}

// sync checks one APIService and writes its condition when it changed. A
// failed discovery check is an error, so that the key is retried with
// backoff (the server may come up without any write), as upstream's.
func (c *APIServiceAvailability) sync(ctx context.Context, name string) error {
	c.mu.Lock()
	stored := c.remote[name]
	c.mu.Unlock()
	if stored == nil {
		return nil
	}
	cond := c.check(ctx, stored)
	if err := c.write(ctx, stored, cond); err != nil {
		return err
	}
	if cond.Reason == failedDiscoveryCheck {
		return errors.New(cond.Message)
	}
	return nil
}

const failedDiscoveryCheck = "FailedDiscoveryCheck"

// write sets cond on the stored APIService and writes its status when that
// changes it.
func (c *APIServiceAvailability) write(ctx context.Context, stored *apiregistrationv1.APIService, cond apiregistrationv1.APIServiceCondition) error {
	s := stored.DeepCopy()
	setAPIServiceCondition(s, cond, metav1.Now())
	if apiequality.Semantic.DeepEqual(s.Status, stored.Status) {
		return nil
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(s)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetAPIVersion("apiregistration.k8s.io/v1")
	u.SetKind("APIService")
	_, err = c.client.UpdateStatus(ctx, u, metav1.UpdateOptions{})
	return err
}

// setAPIServiceCondition is upstream's SetAPIServiceCondition: the
// condition replaces the one of its type, keeping its transition time
// unless the status changes.
func setAPIServiceCondition(s *apiregistrationv1.APIService, cond apiregistrationv1.APIServiceCondition, now metav1.Time) {
	for i := range s.Status.Conditions {
		c := &s.Status.Conditions[i]
		if c.Type != cond.Type {
			continue
		}
		if c.Status != cond.Status {
			c.Status, c.LastTransitionTime = cond.Status, now
		}
		c.Reason, c.Message = cond.Reason, cond.Message
		return
	}
	cond.LastTransitionTime = now
	s.Status.Conditions = append(s.Status.Conditions, cond)
}

// apiServiceFollower keeps the remote APIServices and queues each change.
type apiServiceFollower struct{ c *APIServiceAvailability }

func (f apiServiceFollower) reset(items []storage.KeyValue) {
	f.c.mu.Lock()
	f.c.remote = map[string]*apiregistrationv1.APIService{}
	f.c.mu.Unlock()
	for _, kv := range items {
		f.put(kv)
	}
}

func (f apiServiceFollower) event(ev storage.Event) {
	if ev.Type == storage.EventDelete {
		name := strings.TrimPrefix(ev.KV.Key, apiServicesPrefix)
		f.c.mu.Lock()
		delete(f.c.remote, name)
		f.c.mu.Unlock()
		return
	}
	f.put(ev.KV)
}

func (f apiServiceFollower) put(kv storage.KeyValue) {
	obj, err := layout.Decode(f.c.res, kv)
	if err != nil {
		f.c.log.Warn("decoding a stored APIService", "key", kv.Key, "err", err)
		return
	}
	s := obj.(*apiregistrationv1.APIService)
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	if s.Spec.Service == nil {
		delete(f.c.remote, s.Name)
		return
	}
	f.c.remote[s.Name] = s
	f.c.queue.Add(s.Name)
}

// serviceFollower queues the APIServices of a changed Service.
type serviceFollower struct{ c *APIServiceAvailability }

func (f serviceFollower) reset([]storage.KeyValue) {}

func (f serviceFollower) event(ev storage.Event) {
	namespace, name, ok := strings.Cut(strings.TrimPrefix(ev.KV.Key, servicesPrefix), "/")
	if ok {
		f.c.queueWhere(func(s *apiregistrationv1.APIService) bool {
			return s.Spec.Service.Namespace == namespace && s.Spec.Service.Name == name
		})
	}
}

// sliceFollower queues the APIServices of the Service of a changed
// EndpointSlice (all of them when a deleted slice's service is unknown).
type sliceFollower struct{ c *APIServiceAvailability }

func (f sliceFollower) reset([]storage.KeyValue) {}

func (f sliceFollower) event(ev storage.Event) {
	namespace, _, _ := strings.Cut(strings.TrimPrefix(ev.KV.Key, endpointSlicesPrefix), "/")
	value := ev.KV.Value
	if ev.Type == storage.EventDelete && ev.PrevKV != nil {
		value = ev.PrevKV.Value
	}
	var slice struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	service, known := "", false
	if json.Unmarshal(value, &slice) == nil {
		service, known = slice.Metadata.Labels["kubernetes.io/service-name"]
	}
	f.c.queueWhere(func(s *apiregistrationv1.APIService) bool {
		return !known || s.Spec.Service.Namespace == namespace && s.Spec.Service.Name == service
	})
}
