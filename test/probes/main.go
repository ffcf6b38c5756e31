// Command probes sends the hostile-input probes of issue 24 to a server as
// a low-privilege token user (allowed only configmaps in namespace
// "mine") and prints one JSON line per probe: the status code and, for a
// Status answer, its reason and message; for a watch, the first event's
// type (and an ERROR event's Status). test/sidebyside-probes.sh runs it
// against admitd and the real kube-apiserver and compares the lines.
//
//	probes -server https://127.0.0.1:6443 -token mallory-token
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// probe is one request.
type probe struct {
	Name        string `json:"name"`
	Method      string `json:"-"`
	Path        string `json:"-"`
	ContentType string `json:"-"`
	Body        string `json:"-"`
	Token       string `json:"-"` // "" is the user's token; "-" sends none
	Watch       bool   `json:"-"`
}

// answer is what a server said.
type answer struct {
	Name    string `json:"name"`
	Code    int    `json:"code"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Event   string `json:"event,omitempty"`
	Error   string `json:"error,omitempty"`
}

const cms = "/api/v1/namespaces/mine/configmaps"

func probes() []probe {
	ps := []probe{
		{Name: "json patch 16 copies", Method: "PATCH", Path: cms + "/target", ContentType: "application/json-patch+json", Body: copyBomb(16)},
		{Name: "json patch 18 copies", Method: "PATCH", Path: cms + "/target", ContentType: "application/json-patch+json", Body: copyBomb(18)},
	}
	for _, p := range []string{"/healthz", "/livez", "/readyz", "/version"} {
		ps = append(ps,
			probe{Name: "GET " + p + " bogus token", Method: "GET", Path: p, Token: "bogus"},
			probe{Name: "GET " + p + " no token", Method: "GET", Path: p, Token: "-"},
			probe{Name: "GET " + p + " user", Method: "GET", Path: p},
			probe{Name: "POST " + p + " user", Method: "POST", Path: p},
		)
	}
	for _, q := range []string{
		"resourceVersion=garbage", "resourceVersion=-1", "resourceVersion=99999999999999999999",
		"resourceVersionMatch=bogus", "resourceVersion=0&resourceVersionMatch=bogus", "resourceVersion=0&resourceVersionMatch=Exact",
		"resourceVersionMatch=NotOlderThan", "resourceVersion=1&resourceVersionMatch=Exact",
		"timeoutSeconds=-1", "timeoutSeconds=garbage", "timeoutSeconds=99999999999999999999",
		"limit=-1", "limit=0", "limit=garbage", "limit=99999999999999999999",
		"continue=garbage", "continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIuLi8uLi8ifQ",
		"resourceVersion=1&continue=garbage",
		"labelSelector=a%20in%20(", "labelSelector=" + strings.Repeat("a", 70) + "=b", "fieldSelector=bogus.field=x", "fieldSelector=metadata.name%3D%3D%3Dx",
		"sendInitialEvents=garbage", "sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
		"allowWatchBookmarks=garbage", "watch=garbage", "watch=false",
	} {
		ps = append(ps, probe{Name: "list " + q, Method: "GET", Path: cms + "?" + q})
		ps = append(ps, probe{Name: "watch " + q, Method: "GET", Path: cms + "?watch=1&" + q, Watch: true})
	}
	for _, q := range []string{"resourceVersion=garbage", "resourceVersion=-1", "export=true", "export=garbage", "watch=true", "timeout=garbage", "timeout=-1s"} {
		ps = append(ps, probe{Name: "get " + q, Method: "GET", Path: cms + "/target?" + q})
	}
	for _, q := range []string{"fieldValidation=bogus", "dryRun=bogus", "dryRun=All&dryRun=bogus", "fieldManager=" + strings.Repeat("m", 200)} {
		ps = append(ps, probe{Name: "create " + q, Method: "POST", Path: cms + "?" + q, ContentType: "application/json",
			Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"never"}}`})
	}
	for _, q := range []string{"propagationPolicy=bogus", "gracePeriodSeconds=garbage", "dryRun=bogus", "orphanDependents=true&propagationPolicy=Foreground"} {
		ps = append(ps, probe{Name: "delete " + q, Method: "DELETE", Path: cms + "/target?" + q})
	}
	deep := strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001)
	for _, b := range []struct{ name, body string }{
		{"unterminated JSON", `{`}, {"a JSON array", `[1]`}, {"a number where a string goes", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"t1"},"data":{"a":1}}`},
		{"another kind", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"t2"}}`}, {"no kind", `{"metadata":{"name":"t3"},"data":{"a":1}}`},
		{"deep JSON", deep}, {"empty body", ``},
	} {
		ps = append(ps, probe{Name: "create " + b.name, Method: "POST", Path: cms, ContentType: "application/json", Body: b.body})
	}
	ps = append(ps,
		probe{Name: "create YAML tab", Method: "POST", Path: cms, ContentType: "application/yaml", Body: "metadata:\n\tname: x"},
		probe{Name: "delete text/plain body", Method: "DELETE", Path: cms + "/target", ContentType: "text/plain", Body: "x"},
		probe{Name: "legacy watch path", Method: "GET", Path: "/api/v1/watch/namespaces/mine/configmaps", Watch: true},
		probe{Name: "legacy watch path other namespace", Method: "GET", Path: "/api/v1/watch/namespaces/other/configmaps", Watch: true},
	)
	return ps
}

func copyBomb(n int) string {
	ops := []string{`{"op":"add","path":"/metadata/annotations","value":{"z":"` + strings.Repeat("x", 1000) + `"}}`}
	for i := range n {
		ops = append(ops, fmt.Sprintf(`{"op":"copy","from":"/metadata/annotations","path":"/metadata/annotations/k%d"}`, i))
	}
	return "[" + strings.Join(ops, ",") + "]"
}

func main() {
	server := flag.String("server", "", "server URL")
	token := flag.String("token", "", "the low-privilege user's bearer token")
	flag.Parse()
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // #nosec: local test servers
	enc := json.NewEncoder(os.Stdout)
	for _, p := range probes() {
		_ = enc.Encode(run(c, *server, *token, p))
	}
}

func run(c *http.Client, server, token string, p probe) answer {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, p.Method, server+p.Path, strings.NewReader(p.Body))
	if p.ContentType != "" {
		req.Header.Set("Content-Type", p.ContentType)
	}
	switch p.Token {
	case "":
		req.Header.Set("Authorization", "Bearer "+token)
	case "-":
	default:
		req.Header.Set("Authorization", "Bearer "+p.Token)
	}
	a := answer{Name: p.Name}
	resp, err := c.Do(req)
	if err != nil {
		a.Error = err.Error()
		return a
	}
	defer resp.Body.Close()
	a.Code = resp.StatusCode
	var body []byte
	if p.Watch && resp.StatusCode == http.StatusOK {
		line := make(chan []byte, 1)
		go func() { b, _ := bufio.NewReader(resp.Body).ReadBytes('\n'); line <- b }()
		select {
		case body = <-line:
		case <-time.After(3 * time.Second):
			a.Event = "(none within 3s)"
			return a
		}
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if json.Unmarshal(body, &ev) == nil {
			a.Event = ev.Type
			if ev.Type != "ERROR" {
				return a
			}
			body = ev.Object
		} else if len(body) == 0 {
			a.Event = "(ended)"
			return a
		}
	} else {
		body, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	}
	var st struct {
		Kind, Reason, Message string
	}
	if json.Unmarshal(body, &st) == nil && st.Message != "" {
		a.Reason, a.Message = st.Reason, st.Message
	} else if resp.StatusCode >= 300 || strings.HasSuffix(strings.Split(p.Path, "?")[0], "z") { // failures and health bodies
		a.Message = strings.TrimSpace(string(body[:min(len(body), 300)]))
	}
	return a
}
