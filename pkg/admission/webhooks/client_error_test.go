package webhooks

import (
	"net/http"
	"strings"
	"testing"
)

// A non-2xx answer's Status is read as client-go reads it: case-sensitively,
// its code as it says.
func TestHTTPErrorReadsTheStatusAsClientGo(t *testing.T) {
	resp := &http.Response{StatusCode: 500, Header: http.Header{"Content-Type": {"application/json"}}}
	for _, tc := range []struct {
		body, msg string
		code      int32
	}{
		{`{"kind":"Status","status":"Failure","message":"boom"}`, "boom", 0},
		{`{"kind":"Status","status":"Failure","message":"boom","code":418}`, "boom", 418},
		{`{"kind":"Status","Status":"Failure","Message":"boom"}`, "an error on the server (\"unknown\") has prevented the request from succeeding", 500},
		{`{"KIND":"Status","status":"Failure","message":"boom","code":403}`, "boom", 403},
		{`{"kind":"Status","Kind":"Pod","status":"Failure","message":"boom"}`, "an error on the server (\"unknown\") has prevented the request from succeeding", 500},
		{`{"apiVersion":"foo/v9","kind":"Status","status":"Failure","message":"m","code":403}`, "m", 403},
		{`{"apiVersion":"a/b/c","kind":"Status","status":"Failure","message":"m","code":403}`, "an error on the server (\"unknown\") has prevented the request from succeeding", 500},
		{"kind: Status\nstatus: Failure\nmessage: yaml-m\ncode: 409\n", "yaml-m", 409},
	} {
		se := httpError(resp, []byte(tc.body))
		if se.ErrStatus.Message != tc.msg || se.ErrStatus.Code != tc.code {
			t.Errorf("httpError(%s) = %q code %d, want %q code %d", tc.body, se.ErrStatus.Message, se.ErrStatus.Code, tc.msg, tc.code)
		}
	}
}

// The body of a failed call is text, for its message, as client-go decides:
// no Content-Type, or a text/ one in any case.
func TestHTTPErrorTextBodies(t *testing.T) {
	for ct, text := range map[string]bool{"": true, "Text/Plain; charset=utf-8": true, "application/json": false, "text/html": true} {
		resp := &http.Response{StatusCode: 500, Header: http.Header{}}
		if ct != "" {
			resp.Header.Set("Content-Type", ct)
		}
		se := httpError(resp, []byte("plain words"))
		if got := strings.Contains(se.ErrStatus.Message, "plain words"); got != text {
			t.Errorf("Content-Type %q: message %q, want the body in it: %v", ct, se.ErrStatus.Message, text)
		}
	}
}
