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
// publishes the results and returns them. The changes the scanner
// follows afterwards (Run) start from what this scan read.
func (s *Scanner) Scan(ctx context.Context) (*Results, error) {
	bs := bindings(s.src.Current())
	l := newLedger(bs, time.Now())
	var read []scannedResource
	if len(bs) > 0 {
		for _, res := range resourcesFor(s.o.Catalogue, bs) {
			rev, err := s.scanResource(ctx, res, l)
			if err != nil {
				return nil, err
			}
			read = append(read, scannedResource{res: res, rev: rev})
		}
	}
	s.ledger, s.scanned = l, read
	s.finished, s.updated, s.dirty = time.Now(), time.Time{}, false
	return s.publish(ctx)
}

// scannedResource is a resource a scan read, at revision rev.
type scannedResource struct {
	res *registry.Resource
	rev int64
}

// publish serves the ledger's results and hands them to the Publisher.
func (s *Scanner) publish(ctx context.Context) (*Results, error) {
	r := s.ledger.results(s.finished, s.updated)
	s.last.Store(r)
	s.dirty = false
	if s.o.Publisher != nil {
		if err := s.o.Publisher.Publish(ctx, r); err != nil {
			return r, fmt.Errorf("publishing the results: %w", err)
		}
	}
	return r, nil
}

// scanResource evaluates the stored objects of res a page at a time, and
// returns the revision it read them at.
func (s *Scanner) scanResource(ctx context.Context, res *registry.Resource, l *ledger) (int64, error) {
	prefix := layout.ResourcePrefix(res)
	opts := storage.ListOptions{Limit: s.o.PageSize, NoRemainingCount: true}
	for {
		page, err := s.o.Store.List(ctx, prefix, opts)
		if err != nil {
			return 0, fmt.Errorf("listing %s: %w", res.GroupVersionResource, err)
		}
		objs, err := layout.DecodeAll(ctx, res, page.Items)
		if err != nil {
			return 0, err
		}
		for i, obj := range objs {
			ref, steps, err := s.evaluate(ctx, res, obj)
			if err != nil {
				return 0, err
			}
			l.set(page.Items[i].Key, ref, steps, true)
		}
		if !page.More || len(page.Items) == 0 {
			return page.Revision, nil
		}
		// the next page starts after this one's last key, at the
		// revision of the first (a scan sees one state of the resource)
		opts.StartKey = page.Items[len(page.Items)-1].Key + "\x00"
		opts.Revision = page.Revision
	}
}

// evaluate runs the plugin on obj as the UPDATE that re-applies it, then
// pauses; it returns the object's reference and the plugin's steps.
func (s *Scanner) evaluate(ctx context.Context, res *registry.Resource, obj runtime.Object) (ObjectRef, []admission.Step, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ObjectRef{}, nil, err
	}
	a := &admission.Attributes{Name: m.GetName(), Namespace: m.GetNamespace(), Resource: res.GroupVersionResource,
		Kind: res.GroupVersionKind(), Operation: admission.Update, Options: &metav1.UpdateOptions{},
		Object: obj, OldObject: obj, UserInfo: s.o.User, Record: admission.NewRecord()}
	if err := s.plugin.Validate(ctx, a); err != nil && ctx.Err() == nil {
		// only the namespace lookup fails the whole request: the object's
		// namespace is being deleted, or the cache is not synced
		s.o.Logger.Debug("background audit: evaluating", "resource", res.GroupVersionResource, "namespace", a.Namespace, "name", a.Name, "err", err)
	}
	ref := ObjectRef{APIVersion: res.GroupVersion().String(), Kind: res.Kind, Namespace: a.Namespace, Name: a.Name, UID: string(m.GetUID())}
	return ref, a.Record.Steps(), s.pause(ctx)
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
