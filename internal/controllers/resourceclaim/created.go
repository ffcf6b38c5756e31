package resourceclaim

import (
	"strconv"
	"sync"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/lru"
)

// createdClaims are the claims the controller created that its cache may
// not hold yet (upstream's mutation cache in front of its informer): a
// sync retried before the cache has a claim finds it here rather than
// creating another. A claim is forgotten once the cache has applied the
// revision it was created at, since the cache then holds it or its end.
type createdClaims struct {
	mu     sync.Mutex
	claims map[types.NamespacedName]*resourcev1.ResourceClaim
}

func newCreatedClaims() *createdClaims {
	return &createdClaims{claims: map[types.NamespacedName]*resourcev1.ResourceClaim{}}
}

func (cc *createdClaims) add(claim *resourcev1.ResourceClaim) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.claims[types.NamespacedName{Namespace: claim.Namespace, Name: claim.Name}] = claim
}

// forget drops the claims created at or before cached, the revision the
// cache has applied; cc.mu is held.
func (cc *createdClaims) forget(cached int64) {
	for k, claim := range cc.claims {
		if rv, err := strconv.ParseInt(claim.ResourceVersion, 10, 64); err != nil || rv <= cached {
			delete(cc.claims, k)
		}
	}
}

// get is the created claim namespace/name the cache (at revision cached)
// may lack.
func (cc *createdClaims) get(namespace, name string, cached int64) (*resourcev1.ResourceClaim, bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.forget(cached)
	claim, ok := cc.claims[types.NamespacedName{Namespace: namespace, Name: name}]
	return claim, ok
}

// ownedBy are the created claims of the pod namespace/uid the cache (at
// revision cached) may lack.
func (cc *createdClaims) ownedBy(namespace string, uid types.UID, cached int64) []*resourcev1.ResourceClaim {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.forget(cached)
	var out []*resourcev1.ResourceClaim
	for k, claim := range cc.claims {
		if _, owner := owningPod(claim); k.Namespace == namespace && owner == string(uid) {
			out = append(out, claim)
		}
	}
	return out
}

// maxDeletedUIDs is how many deleted pods the controller remembers.
const maxDeletedUIDs = 500

// uidSet remembers the last UIDs added, up to a size.
type uidSet struct{ cache *lru.Cache }

func newUIDSet(size int) *uidSet { return &uidSet{cache: lru.New(size)} }

func (s *uidSet) add(uid types.UID) { s.cache.Add(uid, nil) }

func (s *uidSet) has(uid types.UID) bool {
	_, ok := s.cache.Get(uid)
	return ok
}
