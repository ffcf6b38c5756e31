package auth

import (
	"crypto/sha256"
	"crypto/x509"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// verifiedCacheTTL bounds how long a verified chain is trusted without
// verifying it again; a chain is never trusted past its leaf's NotAfter.
const verifiedCacheTTL = 5 * time.Minute

// verifiedCacheSize bounds the cache; it is cleared when full.
const verifiedCacheSize = 1024

// verifiedCache remembers chains that verified, so that a client's every
// request does not pay for a signature check (the chain of a kept-alive
// connection is the same on each request).
type verifiedCache struct {
	mu      sync.Mutex
	entries map[[32]byte]verifiedEntry
	// leaves are the keys of lone leaf certificates by identity: a
	// connection's requests share its parsed peer certificates, so they
	// need not hash the certificate again (bounded as entries).
	leaves map[*x509.Certificate][32]byte
}

type verifiedEntry struct {
	user    authenticationv1.UserInfo
	expires time.Time
}

func chainKey(certs []*x509.Certificate) [32]byte {
	if len(certs) == 1 { // a client's usual chain: its certificate alone
		return sha256.Sum256(certs[0].Raw)
	}
	h := sha256.New()
	for _, c := range certs {
		h.Write(c.Raw)
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// keyOf is chainKey(certs), remembered for a lone leaf certificate.
func (c *verifiedCache) keyOf(certs []*x509.Certificate) [32]byte {
	if len(certs) != 1 {
		return chainKey(certs)
	}
	c.mu.Lock()
	key, ok := c.leaves[certs[0]]
	c.mu.Unlock()
	if ok {
		return key
	}
	key = chainKey(certs)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.leaves == nil || len(c.leaves) >= verifiedCacheSize {
		c.leaves = map[*x509.Certificate][32]byte{}
	}
	c.leaves[certs[0]] = key
	return key
}

func (c *verifiedCache) get(key [32]byte, now time.Time) (authenticationv1.UserInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || now.After(e.expires) {
		return authenticationv1.UserInfo{}, false
	}
	var user authenticationv1.UserInfo
	e.user.DeepCopyInto(&user)
	return user, true
}

func (c *verifiedCache) put(key [32]byte, user authenticationv1.UserInfo, notAfter, now time.Time) {
	expires := now.Add(verifiedCacheTTL)
	if notAfter.Before(expires) {
		expires = notAfter
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= verifiedCacheSize {
		c.entries = map[[32]byte]verifiedEntry{}
	}
	c.entries[key] = verifiedEntry{user: user, expires: expires}
}
