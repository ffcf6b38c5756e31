package etcd

import (
	"context"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/admitd/admitd/pkg/storage"
)

// Create puts key if it does not exist, in one transaction (sent again
// while etcd is unavailable: see retry.go).
func (s *Store) Create(ctx context.Context, key string, value []byte) (storage.KeyValue, error) {
	k := s.etcdKey(key)
	var a attempts
	var resp *clientv3.TxnResponse
	err := a.run(ctx, s, "create", func(ctx context.Context) (err error) {
		resp, err = s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(k), "=", 0)).
			Then(clientv3.OpPut(k, string(value))).
			Else(a.elseGet(k)).
			Commit()
		return err
	})
	if err != nil {
		return storage.KeyValue{}, err
	}
	if !resp.Succeeded {
		if kv := a.appliedEarlier(resp, value); kv != nil {
			return storage.KeyValue{Key: key, Value: clone(value), CreateRevision: s.rev(kv.CreateRevision), ModRevision: s.rev(kv.ModRevision)}, nil
		}
		if a.unknown != nil { // an earlier attempt may have applied, and the key changed since
			return storage.KeyValue{}, a.unknown
		}
		return storage.KeyValue{}, storage.ErrKeyExists
	}
	rev := s.rev(resp.Header.Revision)
	return storage.KeyValue{Key: key, Value: clone(value), CreateRevision: rev, ModRevision: rev}, nil
}

// Update puts key if it exists with the expected mod revision (0: any);
// with an expected revision it is sent again while etcd is unavailable
// (retry.go).
func (s *Store) Update(ctx context.Context, key string, value []byte, expectedRevision int64) (storage.KeyValue, error) {
	k := s.etcdKey(key)
	if expectedRevision != 0 {
		return s.updateAt(ctx, key, k, value, expectedRevision)
	}
	resp, err := s.casTxn(ctx, "update", k, expectedRevision, clientv3.OpPut(k, string(value), clientv3.WithPrevKV()))
	if err != nil {
		return storage.KeyValue{}, err
	}
	prev := resp.Responses[0].GetResponsePut().GetPrevKv()
	if prev == nil { // the key was there when compared, so etcd returns it
		return storage.KeyValue{}, storage.ErrNotFound
	}
	return storage.KeyValue{Key: key, Value: clone(value), CreateRevision: s.rev(prev.CreateRevision),
		ModRevision: s.rev(resp.Header.Revision)}, nil
}

// updateAt is Update with an expected revision.
func (s *Store) updateAt(ctx context.Context, key, k string, value []byte, expected int64) (storage.KeyValue, error) {
	var a attempts
	var resp *clientv3.TxnResponse
	err := a.run(ctx, s, "update", func(ctx context.Context) (err error) {
		resp, err = s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(k), "=", s.etcdRev(expected))).
			Then(clientv3.OpPut(k, string(value), clientv3.WithPrevKV())).
			Else(a.elseGet(k)).
			Commit()
		return err
	})
	if err != nil {
		return storage.KeyValue{}, err
	}
	if resp.Succeeded {
		prev := resp.Responses[0].GetResponsePut().GetPrevKv()
		if prev == nil {
			return storage.KeyValue{}, storage.ErrNotFound
		}
		return storage.KeyValue{Key: key, Value: clone(value), CreateRevision: s.rev(prev.CreateRevision),
			ModRevision: s.rev(resp.Header.Revision)}, nil
	}
	if kv := a.appliedEarlier(resp, value); kv != nil && s.rev(kv.ModRevision) > expected {
		return storage.KeyValue{Key: key, Value: clone(value), CreateRevision: s.rev(kv.CreateRevision), ModRevision: s.rev(kv.ModRevision)}, nil
	}
	if a.unknown != nil {
		return storage.KeyValue{}, a.unknown
	}
	if len(resp.Responses[0].GetResponseRange().GetKvs()) == 0 {
		return storage.KeyValue{}, storage.ErrNotFound
	}
	return storage.KeyValue{}, storage.ErrConflict
}

// Delete removes key if it exists with the expected mod revision (0: any).
func (s *Store) Delete(ctx context.Context, key string, expectedRevision int64) (storage.KeyValue, int64, error) {
	k := s.etcdKey(key)
	resp, err := s.casTxn(ctx, "delete", k, expectedRevision, clientv3.OpDelete(k, clientv3.WithPrevKV()))
	if err != nil {
		return storage.KeyValue{}, 0, err
	}
	prevs := resp.Responses[0].GetResponseDeleteRange().GetPrevKvs()
	if len(prevs) == 0 {
		return storage.KeyValue{}, 0, storage.ErrNotFound
	}
	return s.kv(prevs[0]), s.rev(resp.Header.Revision), nil
}

// casTxn runs then on k if k exists and, when expected is not 0, was last
// written at revision expected; otherwise it reads k to tell a missing key
// (ErrNotFound) from a conflict (ErrConflict).
func (s *Store) casTxn(ctx context.Context, op, k string, expected int64, then clientv3.Op) (*clientv3.TxnResponse, error) {
	cond := clientv3.Compare(clientv3.ModRevision(k), ">", 0)
	if expected != 0 {
		cond = clientv3.Compare(clientv3.ModRevision(k), "=", s.etcdRev(expected))
	}
	var resp *clientv3.TxnResponse
	err := s.call(ctx, op, true, func(ctx context.Context) (err error) {
		resp, err = s.client.Txn(ctx).If(cond).Then(then).Else(clientv3.OpGet(k, clientv3.WithKeysOnly())).Commit()
		return err
	})
	if err != nil {
		return nil, err
	}
	if !resp.Succeeded {
		if len(resp.Responses[0].GetResponseRange().GetKvs()) == 0 {
			return nil, storage.ErrNotFound
		}
		return nil, storage.ErrConflict
	}
	return resp, nil
}

// kv converts an etcd key-value.
func (s *Store) kv(kv *mvccpb.KeyValue) storage.KeyValue {
	return storage.KeyValue{Key: s.storageKey(kv.Key), Value: kv.Value,
		CreateRevision: s.rev(kv.CreateRevision), ModRevision: s.rev(kv.ModRevision)}
}

func clone(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}
