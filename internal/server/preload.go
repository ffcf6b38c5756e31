package server

import (
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// preloadUser writes the objects admitd audit copies in: an administrator.
var preloadUser = authenticationv1.UserInfo{Username: "system:admitd:audit-preload", Groups: []string{"system:masters", "system:authenticated"}}

// PreloadTransport is a transport to the server that writes as an
// administrator without admission (no compiled-in plugin, webhook or
// policy sees its requests; validation and storage are as for any
// request). admitd audit puts the objects it audits in with it, as
// objects that were there before the configuration under audit.
func (s *Server) PreloadTransport() http.RoundTripper {
	return s.api.LoopbackWithoutAdmission(preloadUser)
}
