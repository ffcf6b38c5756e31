package apiserver

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// freshnessPoll is how often a read that names a resourceVersion newer
// than the store's looks again whether the store has reached it.
const freshnessPoll = 20 * time.Millisecond

// waitForRevision returns once the store's revision is at least rev (0:
// at once), else upstream's 504 "Too large resource version" once
// Config.RevisionWait has passed, or the context's error.
func (s *Server) waitForRevision(ctx context.Context, rev int64) error {
	if rev <= 0 {
		return nil
	}
	deadline := time.Now().Add(s.cfg.RevisionWait)
	for {
		current, err := s.store.Revision(ctx)
		if err != nil || current >= rev {
			return err
		}
		if !time.Now().Before(deadline) {
			return tooLargeResourceVersion(rev, current)
		}
		t := time.NewTimer(freshnessPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// tooLargeResourceVersion is upstream's storage.NewTooLargeResourceVersionError
// as its watch cache returns it: a 504 asking the client to retry after 1 s,
// with a ResourceVersionTooLarge cause.
func tooLargeResourceVersion(rev, current int64) error {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", rev, current), 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
	return err
}
