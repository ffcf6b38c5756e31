package backgroundaudit

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage"
)

// Scan evaluates every stored object an Audit binding may match, once,
// publishes the results and returns them.
func (s *Scanner) Scan(ctx context.Context) (*Results, error) {
	bs := bindings(s.src.Current())
	c := newCollector(bs, time.Now())
	if len(bs) > 0 {
		for _, res := range resourcesFor(s.o.Catalogue, bs) {
			if err := s.scanResource(ctx, res, c); err != nil {
				return nil, err
			}
		}
	}
	r := c.finish(time.Now())
	s.last.Store(r)
	if s.o.Publisher != nil {
		if err := s.o.Publisher.Publish(ctx, r); err != nil {
			return r, fmt.Errorf("publishing the results: %w", err)
		}
	}
	return r, nil
}

// scanResource evaluates the stored objects of res a page at a time.
func (s *Scanner) scanResource(ctx context.Context, res *registry.Resource, c *collector) error {
	prefix := layout.ResourcePrefix(res)
	opts := storage.ListOptions{Limit: s.o.PageSize, NoRemainingCount: true}
	for {
		page, err := s.o.Store.List(ctx, prefix, opts)
		if err != nil {
			return fmt.Errorf("listing %s: %w", res.GroupVersionResource, err)
		}
		objs, err := layout.DecodeAll(ctx, res, page.Items)
		if err != nil {
			return err
		}
		for _, obj := range objs {
			if err := s.evaluate(ctx, res, obj, c); err != nil {
				return err
			}
		}
		if !page.More || len(page.Items) == 0 {
			return nil
		}
		// the next page starts after this one's last key, at the
		// revision of the first (a scan sees one state of the resource)
		opts.StartKey = page.Items[len(page.Items)-1].Key + "\x00"
		opts.Revision = page.Revision
	}
}

// evaluate runs the plugin on obj as the UPDATE that re-applies it, then
// pauses.
func (s *Scanner) evaluate(ctx context.Context, res *registry.Resource, obj runtime.Object, c *collector) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	a := &admission.Attributes{Name: m.GetName(), Namespace: m.GetNamespace(), Resource: res.GroupVersionResource,
		Kind: res.GroupVersionKind(), Operation: admission.Update, Options: &metav1.UpdateOptions{},
		Object: obj, OldObject: obj, UserInfo: s.o.User, Record: admission.NewRecord()}
	if err := s.plugin.Validate(ctx, a); err != nil && ctx.Err() == nil {
		// only the namespace lookup fails the whole request: the object's
		// namespace is being deleted, or the cache is not synced
		s.o.Logger.Debug("background audit: evaluating", "resource", res.GroupVersionResource, "namespace", a.Namespace, "name", a.Name, "err", err)
	}
	c.add(ObjectRef{APIVersion: res.GroupVersion().String(), Kind: res.Kind, Namespace: a.Namespace, Name: a.Name, UID: string(m.GetUID())}, a.Record.Steps())
	return s.pause(ctx)
}

func (s *Scanner) pause(ctx context.Context) error {
	if s.o.Pause < 0 {
		return ctx.Err()
	}
	t := time.NewTimer(s.o.Pause)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
