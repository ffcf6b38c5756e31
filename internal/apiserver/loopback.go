package apiserver

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/admitd/admitd/internal/auth"
)

// Loopback returns a RoundTripper that serves requests in process as user,
// without authentication: the loopback client upstream's in-process
// controllers use. Every request takes the whole API path (admission, audit)
// as one from the network would. Responses are buffered, so a watch through
// it would never return: controllers watch storage instead.
func (s *Server) Loopback(user authenticationv1.UserInfo) http.RoundTripper {
	return &loopback{s: s, user: user}
}

type loopback struct {
	s                *Server
	user             authenticationv1.UserInfo
	withoutAdmission bool
}

// LoopbackWithoutAdmission is Loopback for writes no admission plugin,
// webhook or policy may see: admitd audit copying in the objects it then
// evaluates, as objects that were there before the configuration under
// audit (server.PreloadTransport). The controllers write through admission,
// as kube-controller-manager's.
func (s *Server) LoopbackWithoutAdmission(user authenticationv1.UserInfo) http.RoundTripper {
	return &loopback{s: s, user: user, withoutAdmission: true}
}

type withoutAdmissionKey struct{}

// withoutAdmission reports a request made through LoopbackWithoutAdmission.
func withoutAdmission(ctx context.Context) bool {
	v, _ := ctx.Value(withoutAdmissionKey{}).(bool)
	return v
}

type loopbackKey struct{}

// loopbackUser is the user of a request made through Loopback. A request
// from the network never carries it: only this package sets the key.
func loopbackUser(ctx context.Context) (authenticationv1.UserInfo, bool) {
	u, ok := ctx.Value(loopbackKey{}).(authenticationv1.UserInfo)
	return u, ok
}

// authenticateLoopback is the user of a request made through Loopback,
// counted as an authentication that succeeded and took no time: the user
// is known without looking at any credential.
func (s *Server) authenticateLoopback(ctx context.Context) (authenticationv1.UserInfo, bool) {
	u, ok := loopbackUser(ctx)
	if ok {
		s.cfg.AuthenticationMetrics.Observe(auth.AuthenticationSuccess, u.Username, 0)
	}
	return u, ok
}

func (l *loopback) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := context.WithValue(req.Context(), loopbackKey{}, l.user)
	if l.withoutAdmission {
		ctx = context.WithValue(ctx, withoutAdmissionKey{}, true)
	}
	in := req.Clone(ctx)
	if in.Body == nil {
		in.Body = http.NoBody
	}
	in.RequestURI = req.URL.RequestURI()
	w := &bufferedResponse{header: http.Header{}}
	if aborted := l.serve(w, in); aborted {
		// The request ran out of time, or its context ended, after its
		// answer had begun: what a client over the network sees as a
		// broken connection.
		return nil, fmt.Errorf("%s %s: the server aborted the response: %w", req.Method, req.URL.Path, cmp.Or(in.Context().Err(), io.ErrUnexpectedEOF))
	}
	if w.code == 0 {
		w.code = http.StatusOK
	}
	w.header.Set("Content-Length", strconv.Itoa(w.body.Len()))
	return &http.Response{
		Status: strconv.Itoa(w.code) + " " + http.StatusText(w.code), StatusCode: w.code,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: io.NopCloser(&w.body), ContentLength: int64(w.body.Len()), Request: req,
	}, nil
}

// serve serves in, reporting whether the handler aborted the response
// (http.ErrAbortHandler, which net/http recovers for a request from the
// network).
func (l *loopback) serve(w http.ResponseWriter, in *http.Request) (aborted bool) {
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				panic(p)
			}
			aborted = true
		}
	}()
	l.s.ServeHTTP(w, in)
	return false
}

// bufferedResponse is an http.ResponseWriter that keeps the response.
type bufferedResponse struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(code int) {
	if b.code == 0 {
		b.code = code
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.code == 0 {
		b.code = http.StatusOK
	}
	return b.body.Write(p)
}
