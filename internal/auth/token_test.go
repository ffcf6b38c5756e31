package auth

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
)

var tokenFileCases = []struct {
	name    string
	file    string
	token   string
	want    *authenticationv1.UserInfo // nil: token unknown
	wantLen int
	wantErr string
}{
	{
		name:  "groups quoted",
		file:  `t1,alice,42,"dev,ops"`,
		token: "t1", want: &authenticationv1.UserInfo{Username: "alice", UID: "42", Groups: []string{"dev", "ops"}},
		wantLen: 1,
	},
	{
		name:  "no groups column",
		file:  "t1,alice,42\n",
		token: "t1", want: &authenticationv1.UserInfo{Username: "alice", UID: "42"},
		wantLen: 1,
	},
	{
		name:  "empty groups field gives one empty group, as upstream",
		file:  `t1,alice,42,""`,
		token: "t1", want: &authenticationv1.UserInfo{Username: "alice", UID: "42", Groups: []string{""}},
		wantLen: 1,
	},
	{
		name:  "extra columns ignored",
		file:  `t1,alice,42,"g",whatever,more`,
		token: "t1", want: &authenticationv1.UserInfo{Username: "alice", UID: "42", Groups: []string{"g"}},
		wantLen: 1,
	},
	{
		name:  "blank lines and comments skipped",
		file:  "# token,user,uid\n\nt1,alice,42\n\n# t2,bob,43\n",
		token: "t1", want: &authenticationv1.UserInfo{Username: "alice", UID: "42"},
		wantLen: 1,
	},
	{
		name:  "duplicate token: last wins",
		file:  "t1,alice,42\nt1,bob,43\n",
		token: "t1", want: &authenticationv1.UserInfo{Username: "bob", UID: "43"},
		wantLen: 1,
	},
	{
		name:  "empty token skipped",
		file:  ",alice,42\nt2,bob,43\n",
		token: "", want: nil,
		wantLen: 1,
	},
	{
		name:  "empty user name and uid allowed",
		file:  "t1,,\n",
		token: "t1", want: &authenticationv1.UserInfo{},
		wantLen: 1,
	},
	{
		name:  "lazy quotes",
		file:  `t1,al"ice,42`,
		token: "t1", want: &authenticationv1.UserInfo{Username: `al"ice`, UID: "42"},
		wantLen: 1,
	},
	{
		name:  "CRLF line endings",
		file:  "t1,alice,42\r\nt2,bob,43\r\n",
		token: "t2", want: &authenticationv1.UserInfo{Username: "bob", UID: "43"},
		wantLen: 2,
	},
	{
		name:    "too few columns",
		file:    "t1,alice\n",
		wantErr: `token file "tokens.csv" must have at least 3 columns (token, user name, user uid), found 2`,
	},
	{
		name:  "empty file",
		file:  "",
		token: "t1", want: nil,
	},
}

func TestParseTokenFile(t *testing.T) {
	for _, tt := range tokenFileCases {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseTokenFile(strings.NewReader(tt.file), "tokens.csv", nil)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ParseTokenFile() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTokenFile() error = %v", err)
			}
			if f.Len() != tt.wantLen {
				t.Errorf("ParseTokenFile().Len() = %d, want %d", f.Len(), tt.wantLen)
			}
			got, ok, err := f.AuthenticateToken(context.Background(), tt.token)
			if err != nil || ok != (tt.want != nil) {
				t.Fatalf("AuthenticateToken(%q) = _, %v, %v, want ok %v", tt.token, ok, err, tt.want != nil)
			}
			if tt.want != nil && !reflect.DeepEqual(got, *tt.want) {
				t.Errorf("AuthenticateToken(%q) = %+v, want %+v", tt.token, got, *tt.want)
			}
		})
	}
}

func TestParseTokenFileWarnings(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	if _, err := ParseTokenFile(strings.NewReader("secret1,a,1\nsecret1,b,2\n,c,3\n"), "tokens.csv", log); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"duplicate token", "empty token"} {
		if !strings.Contains(out, want) {
			t.Errorf("log = %q, want a %q warning", out, want)
		}
	}
	if strings.Contains(out, "secret1") {
		t.Errorf("log = %q, must not contain the token", out)
	}
}

func TestLoadTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(path, []byte("t1,alice,42,\"system:masters\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := LoadTokenFile(path, nil)
	if err != nil || f.Len() != 1 {
		t.Fatalf("LoadTokenFile() = %v, %v, want 1 token", f, err)
	}
	if _, err := LoadTokenFile(filepath.Join(t.TempDir(), "absent"), nil); err == nil {
		t.Errorf("LoadTokenFile(absent) error = nil, want an error")
	}
}

func TestBearerToken(t *testing.T) {
	tokens, err := ParseTokenFile(strings.NewReader(`tok,alice,42,"dev"`), "tokens.csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	alice := authenticationv1.UserInfo{Username: "alice", UID: "42", Groups: []string{"dev"}}
	tests := []struct {
		header     string
		wantOK     bool
		wantErr    bool
		wantHeader bool // Authorization still present afterwards
	}{
		{header: "", wantOK: false},
		{header: "Bearer tok", wantOK: true},
		{header: "bearer tok", wantOK: true},
		{header: "BEARER tok", wantOK: true},
		{header: "  Bearer tok  ", wantOK: true},
		{header: "Bearer tok trailing", wantOK: true},
		{header: "Bearer  tok", wantOK: false, wantHeader: true},
		{header: "Bearer ", wantOK: false, wantHeader: true},
		{header: "Bearer", wantOK: false, wantHeader: true},
		{header: "Basic dXNlcjpwYXNz", wantOK: false, wantHeader: true},
		{header: "Bearer nope", wantErr: true, wantHeader: true},
	}
	a := BearerToken(tokens)
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			if tt.header != "" {
				r.Header.Set("Authorization", tt.header)
			}
			got, ok, err := a.Authenticate(r)
			if ok != tt.wantOK || (err != nil) != tt.wantErr {
				t.Fatalf("Authenticate(%q) = _, %v, %v, want %v, error %v", tt.header, ok, err, tt.wantOK, tt.wantErr)
			}
			if ok && !reflect.DeepEqual(got, alice) {
				t.Errorf("Authenticate(%q) = %+v, want %+v", tt.header, got, alice)
			}
			if err != nil && err.Error() != "invalid bearer token" {
				t.Errorf("Authenticate(%q) error = %q, want %q", tt.header, err, "invalid bearer token")
			}
			if has := r.Header.Get("Authorization") != ""; has != tt.wantHeader {
				t.Errorf("Authorization header present after Authenticate(%q) = %v, want %v", tt.header, has, tt.wantHeader)
			}
		})
	}
}

func TestTokenFileReturnsCopies(t *testing.T) {
	f, _ := ParseTokenFile(strings.NewReader(`tok,alice,42,"dev"`), "tokens.csv", nil)
	u, _, _ := f.AuthenticateToken(context.Background(), "tok")
	u.Groups[0] = "changed"
	again, _, _ := f.AuthenticateToken(context.Background(), "tok")
	if again.Groups[0] != "dev" {
		t.Errorf("AuthenticateToken() groups = %q after a caller changed its copy, want [dev]", again.Groups)
	}
}

func FuzzParseTokenFile(f *testing.F) {
	f.Add("t1,alice,42,\"dev,ops\"\n")
	f.Add("# comment\n\nt1,a,b\nt1,c,d\n")
	f.Add(",a,b\n\"unterminated,a,b\n")
	f.Add("a,b\n")
	f.Fuzz(func(t *testing.T, data string) {
		tf, err := ParseTokenFile(strings.NewReader(data), "fuzz", nil)
		if err != nil {
			return
		}
		if _, ok, _ := tf.AuthenticateToken(context.Background(), ""); ok {
			t.Errorf("AuthenticateToken(\"\") ok = true, want false: the empty token is never a credential")
		}
	})
}
