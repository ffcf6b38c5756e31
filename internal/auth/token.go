package auth

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// errInvalidToken is the cause recorded when a bearer token is presented
// but no token authenticator knows it. Upstream words it the same way.
var errInvalidToken = errors.New("invalid bearer token")

// TokenAuthenticator resolves a bearer token to a user. ok is false when the
// token is unknown.
type TokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token string) (user authenticationv1.UserInfo, ok bool, err error)
}

// BearerToken authenticates requests by the token in their
// "Authorization: Bearer <token>" header. The scheme is matched without
// regard to case and surrounding spaces are trimmed; a missing or empty
// token is no credential, an unknown one is an error. On success the
// Authorization header is removed so nothing later is tempted to reuse it.
func BearerToken(tokens TokenAuthenticator) Authenticator {
	return AuthenticatorFunc(func(r *http.Request) (authenticationv1.UserInfo, bool, error) {
		token, found := bearerToken(r.Header.Get("Authorization"))
		if !found {
			return authenticationv1.UserInfo{}, false, nil
		}
		user, ok, err := tokens.AuthenticateToken(r.Context(), token)
		if ok {
			r.Header.Del("Authorization")
		}
		if !ok && err == nil {
			err = errInvalidToken
		}
		return user, ok, err
	})
}

// bearerToken extracts the token from an Authorization header value. As
// upstream, the value splits on single spaces into at most three parts, so
// "Bearer  tok" (two spaces) has an empty token and "Bearer tok x" has the
// token "tok".
func bearerToken(header string) (string, bool) {
	header = strings.TrimSpace(header)
	if header == "" {
		return "", false
	}
	parts := strings.SplitN(header, " ", 3)
	if len(parts) < 2 || !strings.EqualFold(parts[0], "bearer") || parts[1] == "" {
		return "", false
	}
	return parts[1], true
}

// TokenFile is a static token table in kube-apiserver's --token-auth-file
// format. It is immutable once loaded.
type TokenFile struct {
	users map[string]authenticationv1.UserInfo
}

// LoadTokenFile reads a token file; see ParseTokenFile for the format.
// Warnings about skipped or repeated records go to log (nil: discarded).
func LoadTokenFile(path string, log *slog.Logger) (*TokenFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseTokenFile(f, path, log)
}

// ParseTokenFile reads CSV records "token,user,uid[,groups[,...]]" from r.
// groups is one field holding a comma-separated list, so it is quoted when
// it names more than one group: `t1,alice,42,"dev,ops"`. Further columns
// are ignored. As upstream:
//   - a record with fewer than three columns is an error;
//   - a record with an empty token is skipped with a warning;
//   - when a token repeats, the last record wins (with a warning);
//   - the groups field is split on commas as it is, so an empty field ("")
//     gives the single group "".
//
// Unlike upstream, which reads strict CSV, lines starting with '#' are
// comments and quotes are read leniently (csv.Reader.LazyQuotes). Blank
// lines are skipped by both. name labels errors and warnings.
func ParseTokenFile(r io.Reader, name string, log *slog.Logger) (*TokenFile, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	reader := csv.NewReader(r)
	reader.FieldsPerRecord = -1
	reader.LazyQuotes = true
	reader.Comment = '#'
	users := map[string]authenticationv1.UserInfo{}
	for n := 1; ; n++ {
		record, err := reader.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("token file %q: %w", name, err)
		}
		if len(record) < 3 {
			return nil, fmt.Errorf("token file %q must have at least 3 columns (token, user name, user uid), found %d", name, len(record))
		}
		token := record[0]
		if token == "" {
			log.Warn("empty token in token file, record skipped", "file", name, "record", n)
			continue
		}
		if _, dup := users[token]; dup {
			log.Warn("duplicate token in token file, the last record wins", "file", name, "record", n)
		}
		user := authenticationv1.UserInfo{Username: record[1], UID: record[2]}
		if len(record) >= 4 {
			user.Groups = strings.Split(record[3], ",")
		}
		users[token] = user
	}
	return &TokenFile{users: users}, nil
}

// Len returns the number of tokens in the file.
func (f *TokenFile) Len() int { return len(f.users) }

// AuthenticateToken implements TokenAuthenticator.
func (f *TokenFile) AuthenticateToken(_ context.Context, token string) (authenticationv1.UserInfo, bool, error) {
	user, ok := f.users[token]
	if !ok {
		return authenticationv1.UserInfo{}, false, nil
	}
	user.Groups = append([]string(nil), user.Groups...)
	return user, true, nil
}
