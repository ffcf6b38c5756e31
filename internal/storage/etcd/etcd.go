// Package etcd is the etcd v3 backend of pkg/storage: admitd's keys,
// revisions, compare-and-swap, history and watches map one to one onto an
// etcd cluster, so that the revision of an etcd write is the resourceVersion
// of the object, as in kube-apiserver.
//
// Keys: a storage key starting with Config.Root has that root replaced by
// Config.Prefix (kube-apiserver's --etcd-prefix); any other key is put
// under Prefix as is. Writes are single etcd transactions that compare the
// key's mod revision, so a write is acknowledged only once the cluster has
// committed it; a write whose outcome etcd did not report (a timeout, a lost
// leader) is sent again for a few seconds when its compare makes that safe
// (retry.go), and otherwise fails with ErrUnavailable and an "outcome
// unknown" message.
package etcd

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/admitd/admitd/pkg/storage"
)

// ErrUnavailable wraps every failure to reach a working etcd cluster: no
// endpoint answers, the cluster has no leader (lost quorum), or a request
// timed out.
var ErrUnavailable = errors.New("etcd cluster unavailable")

// DefaultRequestTimeout bounds a request whose context has no deadline.
const DefaultRequestTimeout = 15 * time.Second

// Config says how to reach etcd and where admitd's keys live in it.
type Config struct {
	// Endpoints are the etcd client URLs (kube-apiserver's --etcd-servers).
	Endpoints []string
	// Prefix replaces Root at the start of every key
	// (kube-apiserver's --etcd-prefix, "/registry" by default).
	Prefix string
	// Root is the start of storage keys that Prefix replaces
	// (layout.Root without its trailing slash, for the server).
	Root string
	// CAFile, CertFile and KeyFile secure the connection
	// (--etcd-cafile, --etcd-certfile, --etcd-keyfile).
	CAFile, CertFile, KeyFile string
	// DialTimeout bounds the first connection (default 20s).
	DialTimeout time.Duration
	// RequestTimeout bounds a request whose context has no deadline
	// (default DefaultRequestTimeout).
	RequestTimeout time.Duration
	// RevisionOffset is subtracted from etcd's revisions: 0 for the
	// server, where resourceVersions are etcd's revisions as in
	// kube-apiserver; 1 makes a new etcd (revision 1) a store at revision
	// 0, as the other backends start.
	RevisionOffset int64
}

// Store is a storage.Store over an etcd cluster.
type Store struct {
	client  *clientv3.Client
	cfg     Config
	timeout time.Duration

	mu       sync.Mutex
	closed   bool
	watchers map[*Watcher]struct{}
}

var _ storage.Store = (*Store)(nil)

// Open connects to the cluster and checks that it answers.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("etcd: no endpoints")
	}
	ccfg := clientv3.Config{
		Endpoints:            cfg.Endpoints,
		DialTimeout:          cmp(cfg.DialTimeout, 20*time.Second),
		DialKeepAliveTime:    30 * time.Second,
		DialKeepAliveTimeout: 10 * time.Second,
		Logger:               zap.NewNop(),
	}
	if cfg.CAFile != "" || cfg.CertFile != "" || cfg.KeyFile != "" {
		tlsInfo := transport.TLSInfo{CertFile: cfg.CertFile, KeyFile: cfg.KeyFile, TrustedCAFile: cfg.CAFile}
		tlsCfg, err := tlsInfo.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("etcd: TLS configuration: %w", err)
		}
		ccfg.TLS = tlsCfg
	}
	client, err := clientv3.New(ccfg)
	if err != nil {
		return nil, fmt.Errorf("etcd: connecting to %s: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	s := &Store{client: client, cfg: cfg, timeout: cmp(cfg.RequestTimeout, DefaultRequestTimeout),
		watchers: make(map[*Watcher]struct{})}
	if _, err := s.Revision(ctx); err != nil {
		client.Close()
		return nil, fmt.Errorf("etcd: %s: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	return s, nil
}

func cmp(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Client is the underlying etcd client (for the compactor and tests).
func (s *Store) Client() *clientv3.Client { return s.client }

// etcdKey maps a storage key to its etcd key.
func (s *Store) etcdKey(key string) string {
	if rest, ok := strings.CutPrefix(key, s.cfg.Root); ok && s.cfg.Root != "" {
		return s.cfg.Prefix + rest
	}
	return s.cfg.Prefix + key
}

// storageKey maps an etcd key back to its storage key.
func (s *Store) storageKey(key []byte) string {
	return s.cfg.Root + strings.TrimPrefix(string(key), s.cfg.Prefix)
}

// rev maps an etcd revision to a storage revision, and etcdRev back.
func (s *Store) rev(etcdRev int64) int64 { return etcdRev - s.cfg.RevisionOffset }
func (s *Store) etcdRev(rev int64) int64 { return rev + s.cfg.RevisionOffset }

// call runs a request with the store's timeout and leader requirement,
// mapping its error.
func (s *Store) call(ctx context.Context, op string, write bool, f func(ctx context.Context) error) error {
	if s.isClosed() {
		return storage.ErrClosed
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	err := f(clientv3.WithRequireLeader(ctx))
	if err == nil {
		return nil
	}
	return s.mapError(ctx, op, write, err)
}

// mapError turns a client error into a storage error.
func (s *Store) mapError(ctx context.Context, op string, write bool, err error) error {
	switch {
	case s.isClosed():
		return storage.ErrClosed
	case errors.Is(err, rpctypes.ErrCompacted):
		return fmt.Errorf("%w (etcd %s)", storage.ErrCompacted, op)
	case errors.Is(err, rpctypes.ErrFutureRev):
		return fmt.Errorf("%w (etcd %s)", storage.ErrFutureRevision, op)
	case errors.Is(ctx.Err(), context.Canceled):
		return fmt.Errorf("etcd %s: %w", op, err) // the caller gave up
	case errors.Is(err, rpctypes.ErrRequestTooLarge) || status.Code(err) == codes.ResourceExhausted:
		// over etcd's --max-request-bytes or the client's send limit:
		// sending it again would fail again
		return storage.ErrTooLarge
	}
	outcome := ""
	if write {
		outcome = ", outcome unknown"
	}
	return fmt.Errorf("%w: %s%s: %v", ErrUnavailable, op, outcome, err)
}

func (s *Store) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Revision returns the cluster's current revision (a linearizable read).
func (s *Store) Revision(ctx context.Context) (int64, error) {
	var rev int64
	err := s.call(ctx, "revision", false, func(ctx context.Context) error {
		resp, err := s.client.Get(ctx, s.probeKey(), clientv3.WithCountOnly())
		if err == nil {
			rev = s.rev(resp.Header.Revision)
		}
		return err
	})
	return rev, err
}

// Health reads the key <prefix>/health, as kube-apiserver's etcd check
// does: an error when etcd does not answer before ctx ends.
func (s *Store) Health(ctx context.Context) error {
	if _, err := s.client.Get(ctx, path.Join("/", s.cfg.Prefix, "health")); err != nil {
		return fmt.Errorf("error getting data from etcd: %w", err)
	}
	return nil
}

// Close ends every watcher with storage.ErrClosed and closes the client.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	watchers := s.watchers
	s.watchers = nil
	s.mu.Unlock()
	for w := range watchers {
		w.end(storage.ErrClosed)
	}
	err := s.client.Close()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// probeKey is a key for requests that only want a revision.
func (s *Store) probeKey() string { return s.cfg.Prefix + "/" }
