package webhooks

import (
	"net/http"
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
	} {
		se := httpError(resp, []byte(tc.body))
		if se.ErrStatus.Message != tc.msg || se.ErrStatus.Code != tc.code {
			t.Errorf("httpError(%s) = %q code %d, want %q code %d", tc.body, se.ErrStatus.Message, se.ErrStatus.Code, tc.msg, tc.code)
		}
	}
}
