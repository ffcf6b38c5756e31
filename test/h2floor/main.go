// h2floor is the least an API server written with Go's net/http can cost a
// request: an HTTPS server (HTTP/2, TLS 1.3, as admitd and kube-apiserver
// serve) whose one handler reads the request's body and writes it back, 201
// for a POST. A create from client-go gets its own object back, decodes it
// and counts it done, so ../shared/tools/loadgen runs against it unchanged:
//
//	h2floor -kubeconfig-out /tmp/floor.kubeconfig &
//	loadgen -kubeconfig /tmp/floor.kubeconfig -count 20000
//
// The CPU it uses per create (from /proc/<pid>/stat, as test/sidebyside-load.sh
// counts it) is the floor of issue 27's ratios: what HTTP/2, TLS and the
// goroutines of Go's server cost, before any decoding, admission or storage.
// Nothing is authenticated or stored; it binds to 127.0.0.1 only.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

func main() {
	out := flag.String("kubeconfig-out", "h2floor.kubeconfig", "where to write a kubeconfig for the server")
	flag.Parse()
	ca, err := webhooktest.NewCA("h2floor")
	if err != nil {
		log.Fatal(err)
	}
	cert, err := ca.Issue("127.0.0.1")
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	url := "https://" + ln.Addr().String()
	if err := os.WriteFile(*out, []byte(kubeconfig(url)), 0o600); err != nil {
		log.Fatal(err)
	}
	fmt.Println("h2floor serving on", url)
	srv := &http.Server{
		Handler:   http.HandlerFunc(echo),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}, MinVersion: tls.VersionTLS12},
	}
	log.Fatal(srv.ServeTLS(ln, "", ""))
}

// echo answers a request with its own body: a POST's object is what a
// create returns.
func echo(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 3<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" || len(body) == 0 {
		ct, body = "application/json", []byte(`{"kind":"Status","apiVersion":"v1","status":"Success"}`)
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	if r.Method == http.MethodPost {
		w.WriteHeader(http.StatusCreated)
	}
	_, _ = w.Write(body)
}

func kubeconfig(url string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: h2floor
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: h2floor
  user: {token: unchecked}
contexts:
- name: h2floor
  context: {cluster: h2floor, user: h2floor}
current-context: h2floor
`, url)
}
