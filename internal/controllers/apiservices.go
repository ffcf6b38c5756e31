package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/client-go/util/workqueue"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// APIServiceRegistration keeps a Local APIService for every group/version
// the server serves, as kube-apiserver's autoregister controller with its
// crdRegistrationController: built-in group/versions (named
// "<version>.<group>", "v1." for the core group, with the priorities of
// upstream's table) are created or brought back to their spec once, when
// the server starts, and marked kube-aggregator.kubernetes.io/automanaged
// "onstart"; an onstart APIService that existed at start and is no longer
// served is deleted then. Custom resource group/versions (every served
// version of every definition, group priority 1000 and version priority
// 100) are kept continuously, marked "true", and deleted when no
// definition serves them. An APIService without the label is never
// touched.
type APIServiceRegistration struct {
	store storage.Store
	// apiServices is the resource the stored APIServices are read as (nil
	// when the catalogue does not serve them: every sync then fails).
	apiServices *registry.Resource
	client      dynamic.ResourceInterface
	// builtin are the onstart APIServices, by name.
	builtin map[string]*apiregistrationv1.APIService
	crds    *crdVersions
	log     *slog.Logger
	queue   workqueue.TypedRateLimitingInterface[string]
}

// The automanaged label and its values, as upstream's autoregister.
const (
	AutoRegisterManagedLabel = "kube-aggregator.kubernetes.io/automanaged"
	manageOnStart            = "onstart"
	manageContinuously       = "true"
)

var apiServicesGVR = apiregistrationv1.SchemeGroupVersion.WithResource("apiservices")

// NewAPIServiceRegistration returns the controller of cat's built-in
// group/versions and of the definitions in store, writing through rt (the
// loopback transport of the API server's own user, as upstream's).
func NewAPIServiceRegistration(store storage.Store, cat *registry.Catalogue, rt http.RoundTripper, log *slog.Logger) (*APIServiceRegistration, error) {
	client, err := newAPIServerClient(rt)
	if err != nil {
		return nil, err
	}
	c := &APIServiceRegistration{store: store, client: client.Resource(apiServicesGVR), builtin: map[string]*apiregistrationv1.APIService{},
		crds: &crdVersions{byKey: map[string][]schema.GroupVersion{}}, log: log,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "autoregister"})}
	c.apiServices, _ = cat.Lookup(apiServicesGVR)
	for _, res := range cat.Resources() {
		if p, ok := registry.BuiltinAPIServicePriority(res.GroupVersion()); ok && !res.Unstructured {
			c.builtin[apiServiceName(res.GroupVersion())] = localAPIService(res.GroupVersion(), p, manageOnStart)
		}
	}
	return c, nil
}

// newAPIServerClient is a client whose writes are managed as
// kube-apiserver's own (its user agent names the field manager).
func newAPIServerClient(rt http.RoundTripper) (dynamic.Interface, error) {
	cfg := &rest.Config{Host: "http://loopback", QPS: -1}
	return dynamic.NewForConfigAndClient(cfg, &http.Client{Transport: transport.NewUserAgentRoundTripper("kube-apiserver", rt)})
}

func apiServiceName(gv schema.GroupVersion) string { return gv.Version + "." + gv.Group }

func localAPIService(gv schema.GroupVersion, p registry.APIServicePriority, managed string) *apiregistrationv1.APIService {
	return &apiregistrationv1.APIService{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService"},
		ObjectMeta: metav1.ObjectMeta{Name: apiServiceName(gv), Labels: map[string]string{AutoRegisterManagedLabel: managed}},
		Spec:       apiregistrationv1.APIServiceSpec{Group: gv.Group, Version: gv.Version, GroupPriorityMinimum: p.Group, VersionPriority: p.Version},
	}
}

// SyncOnStart does the once-only sync: every built-in APIService created
// or brought to its spec, the onstart ones no longer served deleted, and
// the custom resources' APIServices synced from the definitions stored now.
func (c *APIServiceRegistration) SyncOnStart(ctx context.Context) error {
	page, err := c.store.List(ctx, crdPrefix, storage.ListOptions{})
	if err != nil {
		return err
	}
	c.crds.reset(page.Items)
	return c.sync(ctx, true)
}

// Run follows the definitions and the APIServices and keeps the custom
// resources' APIServices until ctx ends.
func (c *APIServiceRegistration) Run(ctx context.Context) {
	go follow(ctx, c.store, apiServicesPrefix, queueAll{c.queue}, c.log)
	runQueue(ctx, c.store, crdPrefix, &crdFollower{versions: c.crds, queue: c.queue}, c.queue,
		func(ctx context.Context, _ string) error { return c.sync(ctx, false) }, c.log, "syncing APIServices", "key")
}

var (
	crdPrefix         = layout.GroupPrefix("apiextensions.k8s.io") + "customresourcedefinitions/"
	apiServicesPrefix = layout.GroupPrefix("apiregistration.k8s.io") + "apiservices/"
)

// sync brings the stored APIServices to the desired ones; onStart also
// syncs the built-in ones.
func (c *APIServiceRegistration) sync(ctx context.Context, onStart bool) error {
	current, err := c.storedAPIServices(ctx)
	if err != nil {
		return err
	}
	desired := c.crds.apiServices()
	if onStart {
		for name, s := range c.builtin {
			desired[name] = s
		}
	}
	for name, want := range desired {
		if err := c.ensure(ctx, want, current[name]); err != nil {
			return err
		}
	}
	for name, cur := range current {
		managed := cur.Labels[AutoRegisterManagedLabel]
		if _, ok := desired[name]; ok || !(managed == manageContinuously || managed == manageOnStart && onStart) {
			continue
		}
		err := c.client.Delete(ctx, name, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(cur.UID))})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}

// storedAPIServices reads the APIServices from storage, by name (as the
// controllers read what they follow; their writes go through the API).
// Not through the API: at every start that list was the first sync's main
// cost (JSON, unstructured, then typed), and /readyz waits for the sync.
func (c *APIServiceRegistration) storedAPIServices(ctx context.Context) (map[string]*apiregistrationv1.APIService, error) {
	if c.apiServices == nil {
		return nil, fmt.Errorf("%s are not served", apiServicesGVR.Resource)
	}
	_, objs, err := layout.List(ctx, c.store, c.apiServices, 0)
	if err != nil {
		return nil, err
	}
	current := make(map[string]*apiregistrationv1.APIService, len(objs))
	for _, obj := range objs {
		s, ok := obj.(*apiregistrationv1.APIService)
		if !ok {
			return nil, fmt.Errorf("an APIService decoded as %T", obj)
		}
		current[s.Name] = s
	}
	return current, nil
}

// ensure creates want when missing, or sets an automanaged cur's spec to
// want's.
func (c *APIServiceRegistration) ensure(ctx context.Context, want, cur *apiregistrationv1.APIService) error {
	if cur == nil {
		err := createTyped(ctx, c.client, want)
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}
	if cur.Labels[AutoRegisterManagedLabel] == "" || reflect.DeepEqual(cur.Spec, want.Spec) {
		return nil
	}
	cur = cur.DeepCopy()
	cur.TypeMeta, cur.Spec = want.TypeMeta, want.Spec
	return updateRead(ctx, c.client, cur)
}

// crdVersions are the served group/versions of each stored definition.
type crdVersions struct {
	mu    sync.Mutex
	byKey map[string][]schema.GroupVersion
}

func (v *crdVersions) reset(items []storage.KeyValue) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.byKey = map[string][]schema.GroupVersion{}
	for _, kv := range items {
		v.byKey[kv.Key] = servedVersions(kv.Value)
	}
}

func (v *crdVersions) event(ev storage.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if ev.Type == storage.EventDelete {
		delete(v.byKey, ev.KV.Key)
		return
	}
	v.byKey[ev.KV.Key] = servedVersions(ev.KV.Value)
}

// apiServices are the continuously managed APIServices of the served
// custom resource group/versions, by name.
func (v *crdVersions) apiServices() map[string]*apiregistrationv1.APIService {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := map[string]*apiregistrationv1.APIService{}
	for _, gvs := range v.byKey {
		for _, gv := range gvs {
			out[apiServiceName(gv)] = localAPIService(gv, registry.CustomAPIServicePriority, manageContinuously)
		}
	}
	return out
}

// servedVersions reads a stored definition's served group/versions.
func servedVersions(value []byte) []schema.GroupVersion {
	var crd struct {
		Spec struct {
			Group    string `json:"group"`
			Versions []struct {
				Name   string `json:"name"`
				Served bool   `json:"served"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if json.Unmarshal(value, &crd) != nil {
		return nil
	}
	var out []schema.GroupVersion
	for _, v := range crd.Spec.Versions {
		if v.Served {
			out = append(out, schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name})
		}
	}
	return out
}

// crdFollower feeds the definitions' versions and queues a sync on every
// change.
type crdFollower struct {
	versions *crdVersions
	queue    workqueue.TypedRateLimitingInterface[string]
}

func (f *crdFollower) reset(items []storage.KeyValue) {
	f.versions.reset(items)
	f.queue.Add("")
}

func (f *crdFollower) event(ev storage.Event) {
	f.versions.event(ev)
	f.queue.Add("")
}

// queueAll queues a sync on every change of the prefix it follows (an
// APIService changed or deleted by someone else).
type queueAll struct {
	queue workqueue.TypedRateLimitingInterface[string]
}

func (q queueAll) reset([]storage.KeyValue) { q.queue.Add("") }
func (q queueAll) event(storage.Event)      { q.queue.Add("") }
