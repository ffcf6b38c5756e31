package trace

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// FetchError is a status other than 200 or 404 from the trace endpoint,
// with the body the server sent (a Status).
type FetchError struct {
	Code int
	Body []byte
}

func (e *FetchError) Error() string {
	return fmt.Sprintf("reading the trace: HTTP %d: %s", e.Code, strings.TrimSpace(string(e.Body)))
}

// Fetch reads the trace of auditID from the server at host through hc
// (which carries the credentials). A server keeps a trace just after it
// answers the request, so a 404 is retried (after 1 ms, 2, 4, 8, then
// every 10) until wait has passed; then
// Fetch returns nil and no error. Any other status is a *FetchError.
func Fetch(ctx context.Context, hc *http.Client, host, auditID string, wait time.Duration) (*Trace, error) {
	u := strings.TrimSuffix(host, "/") + Path + "/" + url.PathEscape(auditID)
	deadline := time.Now().Add(wait)
	// the trace is usually kept within a millisecond of the response
	pause := time.Millisecond
	for {
		code, body, err := getJSON(ctx, hc, u)
		if err != nil {
			return nil, err
		}
		switch {
		case code == http.StatusOK:
			var t Trace
			if err := json.Unmarshal(body, &t); err != nil {
				return nil, fmt.Errorf("decoding the trace: %w", err)
			}
			return &t, nil
		case code != http.StatusNotFound:
			return nil, &FetchError{Code: code, Body: body}
		case time.Now().After(deadline):
			return nil, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 10*time.Millisecond)
	}
}

func getJSON(ctx context.Context, hc *http.Client, u string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return resp.StatusCode, body, err
}
