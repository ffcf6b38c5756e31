// h2floor is the least an API server written with Go's net/http can cost a
// request: an HTTPS server (HTTP/2, TLS 1.3, as admitd and kube-apiserver
// serve) whose one handler reads the request's body and writes it back, 201
// for a POST. A create from client-go gets its own object back, decodes it
// and counts it done, so ../shared/tools/loadgen runs against it unchanged:
//
//	h2floor -kubeconfig-out /tmp/floor.kubeconfig &
//	loadgen -kubeconfig /tmp/floor.kubeconfig -count 20000
//
// With watches (-watch-window), it is the floor of issue 25's watchers too:
// a GET with watch=true streams the event of every JSON create after it,
// encoded once and shared (see hub); any other GET of a collection answers
// an empty list.
//
// The CPU it uses per create (from /proc/<pid>/stat, as test/sidebyside-load.sh
// counts it) is the floor of issue 27's ratios: what HTTP/2, TLS and the
// goroutines of Go's server cost, before any decoding, admission or storage.
// With -durable DIR, each create's body is also appended to a file in DIR
// and synced before it is answered (see durableLog): the floor of a server
// that keeps what it acknowledges, as admitd (its embedded store) and etcd
// do. Nothing is authenticated; it binds to 127.0.0.1 only.
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
	"strconv"
	"strings"
	"time"

	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

func main() {
	out := flag.String("kubeconfig-out", "h2floor.kubeconfig", "where to write a kubeconfig for the server")
	window := flag.Duration("watch-window", 50*time.Millisecond, "how long a watcher gathers events before it writes them (admitd's default coalescing)")
	durable := flag.String("durable", "", "a directory: append each create's body to a file there and sync it before answering")
	flag.Parse()
	h := newHub(*window)
	if *durable != "" {
		l, err := openDurableLog(*durable)
		if err != nil {
			log.Fatal(err)
		}
		h.log = l
	}
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
		Handler:   h,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}, MinVersion: tls.VersionTLS12},
	}
	log.Fatal(srv.ServeTLS(ln, "", ""))
}

func (h *hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Query().Get("watch") == "true":
		h.serveWatch(w, r)
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "s"):
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"` + strconv.FormatInt(h.rev.Load(), 10) + `"},"items":[]}`))
	default:
		h.echo(w, r)
	}
}

// echo answers a request with its own body: a POST's object is what a
// create returns; a JSON one is published to the watchers.
func (h *hub) echo(w http.ResponseWriter, r *http.Request) {
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
		if h.log != nil {
			if err := h.log.append(body); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
		}
		w.WriteHeader(http.StatusCreated)
		if ev, ok := h.addedEvent(body, namespaceOf(r.URL.Path)); ok {
			h.publish(r.URL.Path, ev)
		}
	}
	_, _ = w.Write(body)
}

// namespaceOf is the namespace of a /api/v1/namespaces/NS/... path.
func namespaceOf(path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if p == "namespaces" && i+1 < len(parts) {
			return parts[i+1]
		}
	}
	return ""
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
