package node

import (
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/admitd/admitd/internal/auth"
)

// UserPrefix starts the user name of every node: system:node:<name>.
const UserPrefix = "system:node:"

// Identity reports whether u is a node, a user whose name starts with
// UserPrefix and who is in the group system:nodes, and if so its node name.
// The name may be empty (user "system:node:"), which the authorizer refuses.
// This is upstream's default node identifier.
func Identity(u authenticationv1.UserInfo) (name string, isNode bool) {
	name, found := strings.CutPrefix(u.Username, UserPrefix)
	if !found || !slices.Contains(u.Groups, auth.NodesGroup) {
		return "", false
	}
	return name, true
}
