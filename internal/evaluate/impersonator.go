package evaluate

import (
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The identities of a request, as the server sees them:
//
//   - without an impersonator, the administrator (system:masters)
//     impersonates Request.User, so that the server runs the request as
//     that user whatever its permissions;
//   - with one, the impersonator authenticates itself, by a bearer token
//     eval writes to a token file of the in-process server, and
//     impersonates Request.User: the server checks that it may (verb
//     impersonate, or the impersonate:<mode> verbs of constrained
//     impersonation) and refuses the request with a 403 if not.

const (
	allAuthenticated   = "system:authenticated"
	allUnauthenticated = "system:unauthenticated"
)

// checkImpersonator refuses an impersonator a token file cannot express.
func checkImpersonator(u *User) error {
	switch {
	case u == nil:
		return nil
	case u.Name == "":
		return &ConfigError{Err: errors.New("the impersonator needs a name")}
	case len(u.Extra) > 0:
		return &ConfigError{Err: errors.New("the impersonator cannot have extra (eval authenticates it by a token file, which has none)")}
	case strings.ContainsAny(u.Name+u.UID, "\n\r"):
		return &ConfigError{Err: errors.New("the impersonator's name and UID must be one line each")}
	}
	for _, g := range u.Groups {
		if g == "" || strings.ContainsAny(g, ",\n\r") {
			return &ConfigError{Err: fmt.Errorf("the impersonator's group %q cannot be written to a token file (no commas, one line)", g)}
		}
	}
	return nil
}

// writeImpersonatorToken writes a token file under dir that authenticates
// u by a new random token, and returns the file and the token.
func writeImpersonatorToken(dir string, u User) (path, token string, err error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	token = hex.EncodeToString(b)
	path = filepath.Join(dir, "impersonator-token.csv")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return "", "", err
	}
	w := csv.NewWriter(f)
	record := []string{token, u.Name, u.UID}
	if len(u.Groups) > 0 {
		record = append(record, strings.Join(u.Groups, ","))
	}
	if err := w.Write(record); err != nil {
		_ = f.Close()
		return "", "", err
	}
	w.Flush()
	return path, token, errors.Join(w.Error(), f.Close())
}

// impersonatedGroups are the Impersonate-Group headers that give u's
// groups: u.Groups without a last system:authenticated the server adds
// itself (an AdmissionReview's userInfo has it), so that an impersonator
// needs no permission to impersonate that group. Kept when it is the only
// group, as a service account without groups gets others.
func impersonatedGroups(u User) []string {
	g := u.Groups
	n := len(g)
	if n < 2 || g[n-1] != allAuthenticated || slices.Contains(g[:n-1], allAuthenticated) ||
		slices.Contains(g, allUnauthenticated) || u.Name == "system:anonymous" {
		return g
	}
	return g[:n-1]
}
