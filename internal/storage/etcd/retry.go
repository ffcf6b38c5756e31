package etcd

import (
	"bytes"
	"context"
	"errors"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Writes guarded by a compare of the key's mod revision (a create, an
// update with an expected revision) are sent again when etcd fails them as
// unavailable (a leader lost, a member killed): the compare lets at most
// one attempt apply, and when a later attempt finds the key already
// holding exactly the value written, an earlier one applied. A client then
// sees a short delay instead of an error while the cluster elects a new
// leader. Only when no attempt gives an outcome does the write fail with
// ErrUnavailable, "outcome unknown".

// retryFor bounds the time spent sending a write again after its first
// failure, within the request's deadline; each attempt after the first
// waits at most attemptTimeout (a proposal that the lost leader dropped
// is otherwise only reported after etcd's own request timeout, 5s and
// more).
const (
	retryFor       = 5 * time.Second
	attemptTimeout = 2 * time.Second
)

// attempts runs one guarded write, again while it fails as unavailable.
type attempts struct {
	// unknown is the error of the last failed attempt, nil while none
	// failed: once set, an earlier attempt may have applied.
	unknown error
}

// run calls f until it reports an outcome, ctx ends (the store's request
// timeout when ctx has no deadline), or retryFor passes after the first
// failure.
func (a *attempts) run(ctx context.Context, s *Store, op string, f func(context.Context) error) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	var firstFailure time.Time
	wait := 20 * time.Millisecond
	for {
		err := a.attempt(ctx, s, op, f)
		if err == nil || !errors.Is(err, ErrUnavailable) || ctx.Err() != nil {
			return err
		}
		a.unknown = err
		if firstFailure.IsZero() {
			firstFailure = time.Now()
		} else if time.Since(firstFailure) > retryFor {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// attempt sends the write once: the first time within ctx, a later time
// within attemptTimeout too.
func (a *attempts) attempt(ctx context.Context, s *Store, op string, f func(context.Context) error) error {
	if a.unknown != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, attemptTimeout)
		defer cancel()
	}
	return s.call(ctx, op, true, f)
}

// elseGet is the read of a guarded write's failed compare: the key only on
// the first attempt, with its value once an earlier attempt may have
// applied.
func (a *attempts) elseGet(k string) clientv3.Op {
	if a.unknown == nil {
		return clientv3.OpGet(k, clientv3.WithKeysOnly())
	}
	return clientv3.OpGet(k)
}

// appliedEarlier returns the key-value of a failed compare when an earlier
// attempt may have applied and the key holds exactly value.
func (a *attempts) appliedEarlier(resp *clientv3.TxnResponse, value []byte) *mvccpb.KeyValue {
	if a.unknown == nil {
		return nil
	}
	kvs := resp.Responses[0].GetResponseRange().GetKvs()
	if len(kvs) == 1 && bytes.Equal(kvs[0].Value, value) {
		return kvs[0]
	}
	return nil
}
