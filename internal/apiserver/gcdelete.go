package apiserver

import (
	"context"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
)

// The delete side of garbage collection, as upstream's generic store
// (deletionFinalizersForGarbageCollection): a delete adds the "orphan" or
// "foregroundDeletion" finalizer its propagation policy asks for, and the
// garbage collector (internal/controllers) does the rest.

// jobDeleteWarning is what deleting a batch/v1 Job without a propagation
// policy warns, since that orphans its pods.
const jobDeleteWarning = "child pods are preserved by default when jobs are deleted; " +
	"set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning"

// warnDefaultOrphaning adds upstream's warning to a delete of a Job that
// leaves the policy to the server.
func warnDefaultOrphaning(rq *request, res *registry.Resource, opts *metav1.DeleteOptions) {
	//nolint:staticcheck // OrphanDependents is deprecated but still honoured.
	if res.Group == "batch" && res.Resource == "jobs" && opts.PropagationPolicy == nil && opts.OrphanDependents == nil &&
		res.DefaultGCPolicy == registry.OrphanDependents {
		rq.record.AddWarning(jobDeleteWarning)
	}
}

// setGCFinalizers gives m the garbage-collection finalizers opts ask for and
// reports whether its finalizers changed.
func setGCFinalizers(res *registry.Resource, m metav1.Object, opts *metav1.DeleteOptions) bool {
	if res.DefaultGCPolicy == registry.GCUnsupported {
		return false
	}
	orphan := shouldOrphanDependents(res, m, opts)
	foreground := shouldDeleteDependents(m, opts)
	old := m.GetFinalizers()
	var next []string
	for _, f := range old {
		if f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			next = append(next, f)
		}
	}
	if orphan {
		next = append(next, metav1.FinalizerOrphanDependents)
	}
	if foreground {
		next = append(next, metav1.FinalizerDeleteDependents)
	}
	if sameSet(old, next) {
		return false
	}
	m.SetFinalizers(next)
	return true
}

// shouldOrphanDependents: options first, then the object's finalizers, then
// the kind's default.
func shouldOrphanDependents(res *registry.Resource, m metav1.Object, opts *metav1.DeleteOptions) bool {
	//nolint:staticcheck // OrphanDependents is deprecated but still honoured.
	if opts.OrphanDependents != nil {
		return *opts.OrphanDependents
	}
	if p := opts.PropagationPolicy; p != nil {
		switch *p {
		case metav1.DeletePropagationOrphan:
			return true
		case metav1.DeletePropagationBackground, metav1.DeletePropagationForeground:
			return false
		}
	}
	for _, f := range m.GetFinalizers() {
		switch f {
		case metav1.FinalizerOrphanDependents:
			return true
		case metav1.FinalizerDeleteDependents:
			return false
		}
	}
	return res.DefaultGCPolicy == registry.OrphanDependents
}

// shouldDeleteDependents: options first, then the object's finalizers.
func shouldDeleteDependents(m metav1.Object, opts *metav1.DeleteOptions) bool {
	//nolint:staticcheck // OrphanDependents is deprecated but still honoured.
	if opts.OrphanDependents != nil {
		return false
	}
	if p := opts.PropagationPolicy; p != nil {
		switch *p {
		case metav1.DeletePropagationForeground:
			return true
		case metav1.DeletePropagationBackground, metav1.DeletePropagationOrphan:
			return false
		}
	}
	for _, f := range m.GetFinalizers() {
		switch f {
		case metav1.FinalizerDeleteDependents:
			return true
		case metav1.FinalizerOrphanDependents:
			return false
		}
	}
	return false
}

func sameSet(a, b []string) bool {
	in := map[string]bool{}
	for _, x := range a {
		in[x] = true
	}
	other := map[string]bool{}
	for _, x := range b {
		if !in[x] {
			return false
		}
		other[x] = true
	}
	return len(in) == len(other)
}

// deleteStored deletes an object without admission, as the storage-level
// delete upstream's subresources call (the eviction's pod delete). The
// garbage-collection finalizers and preconditions apply.
func (s *Server) deleteStored(ctx context.Context, res *registry.Resource, ns, name string, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	key := layout.Key(res, objectNamespace(res, ns), name)
	for {
		kv, old, err := s.readStored(ctx, res, key, name)
		if err != nil {
			return nil, false, err
		}
		if err := checkDeletePreconditions(res, old, opts.Preconditions); err != nil {
			return nil, false, err
		}
		out, deleted, retry, err := s.commitDelete(ctx, res, key, kv.ModRevision, old, opts)
		if !retry {
			return out, deleted, err
		}
	}
}

// parseRevision reads a resourceVersion as the storage revision.
func parseRevision(rv string) (int64, error) {
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return 0, apierrors.NewInternalError(err)
	}
	return n, nil
}
