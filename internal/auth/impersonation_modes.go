package auth

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Names that impersonation checks use.
const (
	authenticationGroup = "authentication.k8s.io"
	serviceAccountUser  = "system:serviceaccount:"
	serviceAccountGroup = "system:serviceaccounts"
	nodeUser            = "system:node:"
	// nodeNameKey is the extra key carrying the node a service account
	// token is bound to (through its pod).
	nodeNameKey = "authentication.kubernetes.io/node-name"
	// associatedNodeKeys replaces the requester's extra in the checks of
	// the associated-node mode, so one grant covers every node.
	associatedNodeKeys = "authentication.kubernetes.io/associated-node-keys"
	// manyChecks is the number of groups or extra values from which a
	// constrained mode first asks for all of them at once (name "*").
	manyChecks = 4
)

// impersonationMode is one way of being allowed to impersonate. The legacy
// mode has no name and applies to every request; a constrained mode applies
// only to the wanted users its filter accepts.
type impersonationMode struct {
	name    string
	applies func(wanted, requester authenticationv1.UserInfo) bool
	authz   Authorizer
}

func (m impersonationMode) constrained() bool { return m.name != "" }

func (m impersonationMode) verb() string {
	if m.constrained() {
		return "impersonate:" + m.name
	}
	return "impersonate"
}

// check returns the impersonated user, or nil if the mode does not apply,
// or the 403 of the first check that failed.
func (m impersonationMode) check(ctx context.Context, wanted authenticationv1.UserInfo, request Attributes) (*authenticationv1.UserInfo, error) {
	if m.constrained() {
		if !m.applies(wanted, request.User) {
			return nil, nil
		}
		on := request
		on.Verb = "impersonate-on:" + m.name + ":" + request.Verb
		if err := authorize(ctx, m.authz, on); err != nil {
			return nil, err
		}
	}
	actual := wanted
	requester := request.User
	if err := m.authorizeUsername(ctx, requester, wanted, &actual); err != nil {
		return nil, err
	}
	if wanted.UID != "" {
		if err := authorize(ctx, m.authz, m.attributes(requester, authenticationGroup, "uids", wanted.UID)); err != nil {
			return nil, err
		}
	}
	if err := m.authorizeGroups(ctx, requester, wanted.Groups); err != nil {
		return nil, err
	}
	if err := m.authorizeExtra(ctx, requester, wanted.Extra); err != nil {
		return nil, err
	}
	if actual.Username == Anonymous {
		actual.Groups = withGroup(actual.Groups, AllUnauthenticated)
	} else if !slices.Contains(actual.Groups, AllUnauthenticated) {
		actual.Groups = withGroup(actual.Groups, AllAuthenticated)
	}
	return &actual, nil
}

// attributes returns an impersonation check on one resource. Users, groups,
// service accounts and nodes are in the core group for legacy impersonation
// and in authentication.k8s.io for constrained modes.
func (m impersonationMode) attributes(requester authenticationv1.UserInfo, group, resource, name string) Attributes {
	return Attributes{
		User:            requester,
		Verb:            m.verb(),
		APIGroup:        group,
		APIVersion:      "v1",
		Resource:        resource,
		Name:            name,
		ResourceRequest: true,
	}
}

func (m impersonationMode) principalGroup() string {
	if m.constrained() {
		return authenticationGroup
	}
	return ""
}

// authorizeUsername checks the user name, seen as a user, a service account
// or (in constrained modes) a node, and sets the groups those imply.
func (m impersonationMode) authorizeUsername(ctx context.Context, requester, wanted authenticationv1.UserInfo, actual *authenticationv1.UserInfo) error {
	a := m.attributes(requester, m.principalGroup(), "users", wanted.Username)
	if node, ok := nodeName(wanted.Username); ok && m.constrained() {
		// The node modes only accept a bare user name, so no group was
		// requested: a node's groups are fixed.
		a.Resource, a.Name = "nodes", node
		actual.Groups = []string{NodesGroup}
	}
	if ns, name, ok := serviceAccountName(wanted.Username); ok {
		a.Resource, a.Namespace, a.Name = "serviceaccounts", ns, name
		if len(wanted.Groups) == 0 {
			actual.Groups = []string{serviceAccountGroup, serviceAccountGroup + ":" + ns}
		}
	}
	return authorize(ctx, m.authz, a)
}

func (m impersonationMode) authorizeGroups(ctx context.Context, requester authenticationv1.UserInfo, groups []string) error {
	if len(groups) == 0 {
		return nil
	}
	a := m.attributes(requester, m.principalGroup(), "groups", "")
	if m.constrained() {
		if slices.Contains(groups, "") {
			return Forbidden(a, "impersonating the empty string group is not allowed")
		}
		if slices.Contains(groups, SystemPrivileged) {
			a.Name = SystemPrivileged
			return Forbidden(a, "impersonating the system:masters group is not allowed")
		}
		if len(groups) >= manyChecks {
			a.Name = "*"
			if authorize(ctx, m.authz, a) == nil {
				return nil
			}
		}
	}
	for _, g := range groups {
		a.Name = g
		if err := authorize(ctx, m.authz, a); err != nil {
			return err
		}
	}
	return nil
}

// authorizeExtra checks every extra value, as resource userextras with the
// key as subresource. Keys are checked in sorted order (upstream's order is
// a map's, so random).
func (m impersonationMode) authorizeExtra(ctx context.Context, requester authenticationv1.UserInfo, extra map[string]authenticationv1.ExtraValue) error {
	if len(extra) == 0 {
		return nil
	}
	a := m.attributes(requester, authenticationGroup, "userextras", "")
	keys := slices.Sorted(maps.Keys(extra))
	if m.constrained() {
		if err := validateExtra(keys, extra); err != nil {
			return Forbidden(a, err.Error())
		}
		if largeExtra(extra) {
			a.Subresource, a.Name = "*", "*"
			if authorize(ctx, m.authz, a) == nil {
				return nil
			}
		}
	}
	for _, key := range keys {
		a.Subresource = key
		for _, value := range extra[key] {
			a.Name = value
			if err := authorize(ctx, m.authz, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateExtra rejects, in constrained modes only, extra that legacy
// impersonation has always let through.
func validateExtra(keys []string, extra map[string]authenticationv1.ExtraValue) error {
	path := field.NewPath("extra", "key")
	for _, key := range keys {
		values := extra[key]
		if key == "" {
			return fmt.Errorf("impersonating the empty string key in extra is not allowed")
		}
		if err := validation.IsDomainPrefixedPath(path, key).ToAggregate(); err != nil {
			return fmt.Errorf("impersonating an invalid key in extra is not allowed: %w", err)
		}
		if key != strings.ToLower(key) {
			return fmt.Errorf("impersonating a non-lowercase key in extra is not allowed: %q", key)
		}
		if len(values) == 0 {
			return fmt.Errorf("impersonating empty values in extra is not allowed")
		}
		if slices.Contains(values, "") {
			return fmt.Errorf("impersonating the empty string value in extra is not allowed")
		}
	}
	return nil
}

func largeExtra(extra map[string]authenticationv1.ExtraValue) bool {
	count := 0
	for _, values := range extra {
		count += len(values)
	}
	return len(extra) >= manyChecks || count >= manyChecks
}

// authorize turns anything but an allow into a 403. An authorizer that
// already answered with a 403 keeps its message.
func authorize(ctx context.Context, authz Authorizer, a Attributes) error {
	decision, reason, err := authz.Authorize(ctx, a)
	if decision == DecisionAllow {
		return nil
	}
	if apierrors.IsForbidden(err) {
		return err
	}
	msg := reason
	switch {
	case err != nil && reason != "":
		msg = fmt.Sprintf("%v: %s", err, reason)
	case err != nil:
		msg = err.Error()
	}
	return Forbidden(a, msg)
}

// withGroup returns groups with group appended if missing, never modifying
// the caller's backing array.
func withGroup(groups []string, group string) []string {
	if slices.Contains(groups, group) {
		return groups
	}
	return append(slices.Clip(groups), group)
}

// serviceAccountName splits system:serviceaccount:<namespace>:<name>, with
// both parts valid object names.
func serviceAccountName(username string) (namespace, name string, ok bool) {
	rest, found := strings.CutPrefix(username, serviceAccountUser)
	if !found {
		return "", "", false
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 2 ||
		len(apivalidation.ValidateNamespaceName(parts[0], false)) != 0 ||
		len(apivalidation.ValidateServiceAccountName(parts[1], false)) != 0 {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// nodeName returns the node of a system:node:<name> user name, the name
// being a valid node name (a DNS subdomain).
func nodeName(username string) (string, bool) {
	name, found := strings.CutPrefix(username, nodeUser)
	if !found || len(apivalidation.NameIsDNSSubdomain(name, false)) != 0 {
		return "", false
	}
	return name, true
}

func onlyUsername(u authenticationv1.UserInfo) bool {
	return u.UID == "" && len(u.Groups) == 0 && len(u.Extra) == 0
}

// associatedNodeApplies: a service account may ask to act as the node its
// credential is bound to, by user name alone.
func associatedNodeApplies(wanted, requester authenticationv1.UserInfo) bool {
	node, ok := nodeName(wanted.Username)
	if !ok || !onlyUsername(wanted) {
		return false
	}
	if _, _, ok := serviceAccountName(requester.Username); !ok {
		return false
	}
	bound := requester.Extra[nodeNameKey]
	return len(bound) == 1 && bound[0] == node
}

func arbitraryNodeApplies(wanted, _ authenticationv1.UserInfo) bool {
	_, ok := nodeName(wanted.Username)
	return ok && onlyUsername(wanted)
}

func serviceAccountApplies(wanted, _ authenticationv1.UserInfo) bool {
	_, _, ok := serviceAccountName(wanted.Username)
	return ok && onlyUsername(wanted)
}

// userInfoApplies: every user that is neither a node nor a service account,
// with any UID, groups and extra.
func userInfoApplies(wanted, _ authenticationv1.UserInfo) bool {
	_, isNode := nodeName(wanted.Username)
	_, _, isSA := serviceAccountName(wanted.Username)
	return !isNode && !isSA
}

// associatedNodeAuthorizer shows the authorizer, in place of the
// requester's extra, only the keys of that extra, and the node name "*" in
// the impersonate:associated-node check: a grant for one node then holds
// for whichever node the service account is bound to.
func associatedNodeAuthorizer(a Authorizer) Authorizer {
	return AuthorizerFunc(func(ctx context.Context, attrs Attributes) (Decision, string, error) {
		keys := slices.Sorted(maps.Keys(attrs.User.Extra))
		attrs.User.Extra = map[string]authenticationv1.ExtraValue{associatedNodeKeys: append(authenticationv1.ExtraValue{}, keys...)}
		if attrs.Verb == "impersonate:associated-node" {
			attrs.Name = "*"
		}
		if err := authorize(ctx, a, attrs); err != nil {
			return DecisionDeny, "", err
		}
		return DecisionAllow, "", nil
	})
}
