package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Impersonator applies the Impersonate-User, Impersonate-Uid,
// Impersonate-Group and Impersonate-Extra-<key> headers, the way
// kube-apiserver 1.37 does with ConstrainedImpersonation (beta, on by
// default): it tries the constrained modes associated-node, arbitrary-node,
// serviceaccount and user-info (verbs impersonate:<mode> on
// authentication.k8s.io, plus impersonate-on:<mode>:<verb> on the request
// itself), then legacy impersonation (verb impersonate on users, groups,
// serviceaccounts, uids and userextras/<key>).
//
// Upstream also caches each mode's successful checks for ten seconds; this
// implementation asks the authorizer every time, so a revoked permission
// takes effect at once. It does keep upstream's memory of the mode that last
// worked for each requester, which is tried first: besides saving
// authorizer calls, it decides which mode's denial a failed request reports.
//
// An Impersonator is safe for concurrent use.
type Impersonator struct {
	modes    []impersonationMode
	lastMode modeIndex
}

// NewImpersonator returns an Impersonator whose checks are decided by a.
func NewImpersonator(a Authorizer) *Impersonator {
	return &Impersonator{
		modes: []impersonationMode{
			{name: "associated-node", applies: associatedNodeApplies, authz: associatedNodeAuthorizer(a)},
			{name: "arbitrary-node", applies: arbitraryNodeApplies, authz: a},
			{name: "serviceaccount", applies: serviceAccountApplies, authz: a},
			{name: "user-info", applies: userInfoApplies, authz: a},
			{authz: a}, // legacy
		},
		lastMode: modeIndex{m: map[string]int{}},
	}
}

// Impersonate returns the user request should run as. request describes
// the request being made, as the authorization step sees it, with the
// authenticated requester in request.User.
//
// Without impersonation headers it returns request.User and false. With
// them, it returns the impersonated user and true, or an error to send back:
// 400 Bad Request when a UID, groups or extra are requested without a user
// name, 403 Forbidden when the requester may not impersonate what it asked
// for. Once a user name is found the impersonation headers are deleted from
// h, so that nothing downstream sees them.
//
// The impersonated user gets system:authenticated added, or
// system:unauthenticated for system:anonymous, unless one of them was
// requested; a service account requested without groups gets
// system:serviceaccounts and system:serviceaccounts:<namespace>.
func (i *Impersonator) Impersonate(ctx context.Context, h http.Header, request Attributes) (authenticationv1.UserInfo, bool, error) {
	wanted, err := wantedUser(h)
	if err != nil || wanted == nil {
		return request.User, false, err
	}
	user, err := i.impersonatedUser(ctx, *wanted, request)
	if err != nil {
		return authenticationv1.UserInfo{}, false, err
	}
	return user, true, nil
}

// impersonatedUser tries every mode, the one that last worked for this
// requester first, and returns the first success or else the first error.
func (i *Impersonator) impersonatedUser(ctx context.Context, wanted authenticationv1.UserInfo, request Attributes) (authenticationv1.UserInfo, error) {
	requester := request.User.Username
	var firstErr error
	last, haveLast := i.lastMode.get(requester)
	if haveLast {
		user, err := i.modes[last].check(ctx, wanted, request)
		if err == nil && user != nil {
			return *user, nil
		}
		firstErr = err
	}
	for idx, mode := range i.modes {
		if haveLast && idx == last {
			continue
		}
		user, err := mode.check(ctx, wanted, request)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if user == nil {
			continue
		}
		i.lastMode.set(requester, idx)
		return *user, nil
	}
	if firstErr != nil {
		return authenticationv1.UserInfo{}, firstErr
	}
	// Legacy impersonation always decides; fail closed should that change.
	return authenticationv1.UserInfo{}, errors.New("all impersonation modes failed")
}

// wantedUser reads the impersonation headers into the user they ask for,
// exactly as sent: nothing is added yet. It returns nil when no user name
// is requested, and deletes the headers when one is.
func wantedUser(h http.Header) (*authenticationv1.UserInfo, error) {
	wanted := &authenticationv1.UserInfo{
		Username: h.Get(authenticationv1.ImpersonateUserHeader),
		UID:      h.Get(authenticationv1.ImpersonateUIDHeader),
	}
	wanted.Groups = append(wanted.Groups, h[authenticationv1.ImpersonateGroupHeader]...)
	hasExtra := false
	for name, values := range h {
		if !strings.HasPrefix(name, authenticationv1.ImpersonateUserExtraHeaderPrefix) {
			continue
		}
		hasExtra = true
		if len(values) == 0 {
			continue
		}
		key := extraKey(name[len(authenticationv1.ImpersonateUserExtraHeaderPrefix):])
		if wanted.Extra == nil {
			wanted.Extra = map[string]authenticationv1.ExtraValue{}
		}
		wanted.Extra[key] = append(wanted.Extra[key], values...)
	}
	if wanted.Username == "" {
		if wanted.UID != "" || len(wanted.Groups) > 0 || hasExtra {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("requested %s without impersonating a user name", describeWanted(wanted)))
		}
		return nil, nil
	}
	h.Del(authenticationv1.ImpersonateUserHeader)
	h.Del(authenticationv1.ImpersonateUIDHeader)
	h.Del(authenticationv1.ImpersonateGroupHeader)
	for name := range h {
		if strings.HasPrefix(name, authenticationv1.ImpersonateUserExtraHeaderPrefix) {
			h.Del(name)
		}
	}
	return wanted, nil
}

// extraKey turns the rest of an Impersonate-Extra- header name into the
// extra key: lower-cased (header names are case-insensitive), then
// percent-decoded so keys may hold characters header names cannot. A key
// that does not decode is kept as it is.
func extraKey(encoded string) string {
	encoded = strings.ToLower(encoded)
	key, err := url.PathUnescape(encoded)
	if err != nil {
		return encoded
	}
	return key
}

// describeWanted prints the requested user the way upstream's 400 message
// does, which shows its internal user type in Go syntax.
func describeWanted(u *authenticationv1.UserInfo) string {
	var extra map[string][]string
	if u.Extra != nil {
		extra = make(map[string][]string, len(u.Extra))
		for k, v := range u.Extra {
			extra[k] = v
		}
	}
	return fmt.Sprintf("&user.DefaultInfo{Name:%#v, UID:%#v, Groups:%#v, Extra:%#v}", u.Username, u.UID, u.Groups, extra)
}

// modeIndex remembers, per requester name, the index of the mode that last
// impersonated successfully. It holds at most maxModeIndex names and starts
// over when full (upstream keeps an LRU of the same size).
type modeIndex struct {
	mu sync.Mutex
	m  map[string]int
}

const maxModeIndex = 10_000

func (c *modeIndex) get(name string) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	idx, ok := c.m[name]
	return idx, ok
}

func (c *modeIndex) set(name string, idx int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[name]; !ok && len(c.m) >= maxModeIndex {
		clear(c.m)
	}
	c.m[name] = idx
}
