//go:build ignore

// This file is not built in admitd's module: eval.sh copies it, without
// this build constraint, into a copy of the conformance harness
// (../shared/conformance), where it adds the command
//
//	conformance eval --admitd BIN [--eval-flags "FLAGS"] [--scenarios DIR] [--results DIR] [--name eval] [--run SUBSTR] [--workers N]
//	                 [--http-results DIR [--test]]
//
// which runs every scenario that qualifies through `admitd eval` instead
// of a running server and writes results/<name>/<area>/<scenario>.json in
// the harness's own form, so that `conformance diff` compares them with
// the results of the http target. Each worker has its own scripted
// webhook server, the harness's, and gives admitd eval the service map of
// it (--service-map), so that webhooks are called for real.
//
// A scenario qualifies when admitd eval can express it (notEvaluable): not
// when its outcome depends on what the running server did before it (a
// refused impersonation is worded by the mode that last worked for the
// user). A webhook behind a Service the scenario does not serve is called
// and fails, as on the server (--call-unreachable-webhooks). Everything else a
// scenario needs is in it: its objects are given to eval as files (with
// the harness's CRDs for the areas that use them; a
// CertificateSigningRequest names the requester the http target creates
// it as, the harness's administrator: withRequester), its user is
// impersonated (by eval's administrator; with request.impersonate, the
// user impersonates that identity: --impersonator), a CONNECT's options
// object is the review's object, its endpoints answer from the webhook
// server.
//
// With --test, the evaluable scenarios without webhook endpoints are also
// run by `admitd test`, as one generated suite whose expectations are the
// http target's results (suiteFor).
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

func init() {
	if len(os.Args) > 1 && os.Args[1] == "eval" {
		os.Exit(cmdEval(os.Args[2:]))
	}
}

// evalTarget runs scenarios through admitd eval.
type evalTarget struct {
	admitd string
	flags  []string
	ws     *WebhookServer
	svcMap string
	dir    string
	// httpResults are the http target's results, to word a setup error
	// the same way when both refused the same object (setupError).
	httpResults string
}

func cmdEval(args []string) int {
	fs := flag.NewFlagSet("eval", flag.ExitOnError)
	admitd := fs.String("admitd", "", "the admitd binary (required)")
	evalFlags := fs.String("eval-flags", "", "flags for admitd eval (the server configuration of the areas run), space separated")
	scenarios := fs.String("scenarios", "scenarios", "scenario directory")
	results := fs.String("results", "results", "results root (writes <root>/<name>)")
	name := fs.String("name", "eval", "results subdirectory")
	run := fs.String("run", "", "only scenarios whose area/name contains this")
	workers := fs.Int("workers", 2, "scenarios run at once, each worker with its own webhook server")
	httpResults := fs.String("http-results", "", "the http target's results: a setup error both targets give with the same Status message is written in its words")
	viaTest := fs.Bool("test", false, "also run the scenarios without webhook endpoints as one admitd test suite whose expectations are the http results (needs --http-results)")
	_ = fs.Parse(args)
	if *admitd == "" {
		usage()
	}
	all, err := LoadScenarios(*scenarios, "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	scs, _ := LoadScenarios(*scenarios, *run)
	jobs := make(chan *Scenario)
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for w := 0; w < *workers; w++ {
		t, err := newEvalTarget(*admitd, strings.Fields(*evalFlags), all)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer t.close()
		t.httpResults = *httpResults
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sc := range jobs {
				start := time.Now()
				r := t.Run(sc)
				mu.Lock()
				if err := WriteResult(filepath.Join(*results, *name), sc, r); err != nil {
					fmt.Fprintln(os.Stderr, err)
					failed++
				}
				fmt.Printf("%-60s allowed=%-5v %d calls (%.1fs) %s\n", sc.ID(), r.Allowed, len(r.Calls), time.Since(start).Seconds(), r.HarnessError)
				mu.Unlock()
			}
		}()
	}
	skipped := 0
	for _, sc := range scs {
		if why := notEvaluable(sc, all); why != "" {
			fmt.Printf("%-60s not evaluable offline: %s\n", sc.ID(), why)
			skipped++
			continue
		}
		jobs <- sc
	}
	close(jobs)
	wg.Wait()
	fmt.Printf("ran %d scenarios through admitd eval, %d not evaluable\n", len(scs)-skipped, skipped)
	if failed > 0 {
		return 1
	}
	if *viaTest {
		dir, err := os.MkdirTemp("", "conformance-suite-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		return runSuite(*admitd, dir, scs, *httpResults, strings.Fields(*evalFlags))
	}
	return 0
}

// notEvaluable says why admitd eval cannot express a scenario, or "";
// all are the scenarios (the http target runs an area's in this order, on
// one server).
func notEvaluable(sc *Scenario, all []*Scenario) string {
	if prev := impersonatedBefore(sc, all); prev != nil {
		return "needs server-side state: its user impersonated before on the running server (" + prev.ID() +
			"), which words a refused impersonation by the mode that last worked for the user (constrained or legacy)"
	}
	if name := aggregatedClusterRole(sc); name != "" {
		return "races a controller: ClusterRole " + name + " has an aggregationRule, whose rules the clusterrole-aggregation " +
			"controller fills a few milliseconds after the objects are created, and the request depends on them " +
			"(on a cluster, kube-controller-manager races it the same way)"
	}
	return ""
}

// aggregatedClusterRole is the name of a ClusterRole with an
// aggregationRule among sc's objects, or "".
func aggregatedClusterRole(sc *Scenario) string {
	for _, obj := range sc.Objects {
		if obj["kind"] != "ClusterRole" || obj["aggregationRule"] == nil {
			continue
		}
		meta, _ := obj["metadata"].(map[string]interface{})
		return fmt.Sprint(meta["name"])
	}
	return ""
}

// impersonatedBefore is the scenario of sc's area, run before it on the
// same server, whose user (the same as sc's) impersonated too, or nil.
func impersonatedBefore(sc *Scenario, all []*Scenario) *Scenario {
	if sc.Request.Impersonate == nil {
		return nil
	}
	me, _ := json.Marshal(sc.EffectiveUser())
	for _, o := range all {
		if o == sc || o.File == sc.File {
			return nil
		}
		if o.Area != sc.Area || o.Request.Impersonate == nil {
			continue
		}
		if them, _ := json.Marshal(o.EffectiveUser()); bytes.Equal(me, them) {
			return o
		}
	}
	return nil
}

// unlistedService is a Service a webhook of the scenario calls that its
// services: list does not name, or "".
func unlistedService(sc *Scenario) string {
	listed := map[string]bool{}
	for _, s := range sc.Services {
		listed[s.Namespace+"/"+s.Name] = true
	}
	for _, obj := range sc.Objects {
		hooks, _ := obj["webhooks"].([]interface{})
		for _, h := range hooks {
			hm, _ := h.(map[string]interface{})
			cc, _ := hm["clientConfig"].(map[string]interface{})
			if svc, ok := cc["service"].(map[string]interface{}); ok {
				key := fmt.Sprint(svc["namespace"]) + "/" + fmt.Sprint(svc["name"])
				if !listed[key] {
					return key
				}
			}
		}
	}
	return ""
}

func newEvalTarget(admitd string, flags []string, all []*Scenario) (*evalTarget, error) {
	ws, err := NewWebhookServer("127.0.0.1:0", serviceDNSNames(all))
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "conformance-eval-")
	if err != nil {
		return nil, err
	}
	smap := map[string]string{}
	for _, n := range serviceDNSNames(all) {
		smap[n] = ws.Addr
	}
	b, _ := json.Marshal(smap)
	svcMap := filepath.Join(dir, "svc.json")
	if err := os.WriteFile(svcMap, b, 0o644); err != nil {
		return nil, err
	}
	return &evalTarget{admitd: admitd, flags: flags, ws: ws, svcMap: svcMap, dir: dir}, nil
}

func (t *evalTarget) close() {
	t.ws.Close()
	_ = os.RemoveAll(t.dir)
}

// Run evaluates one scenario.
func (t *evalTarget) Run(sc *Scenario) *Result {
	res := &Result{Scenario: sc.ID()}
	repl := map[string]string{
		"{{webhook}}":  t.ws.URL(),
		"{{caBundle}}": base64.StdEncoding.EncodeToString(t.ws.CAPEM),
	}
	t.ws.Reset(sc.Endpoints)
	if err := t.run(sc, repl, res); err != nil {
		res.HarnessError = err.Error()
	}
	res.Calls = NormalizeCalls(dropServerCalls(t.ws.Calls()), validatingPaths(sc), t.ws.Addr)
	res.Finish(t.ws.Addr)
	return res
}

func (t *evalTarget) run(sc *Scenario, repl map[string]string, res *Result) error {
	dir, err := os.MkdirTemp(t.dir, "scenario-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	objects, err := objectsFile(sc, repl)
	if err != nil {
		return err
	}
	review, err := reviewOf(sc, repl)
	if err != nil {
		return err
	}
	objPath, reqPath := filepath.Join(dir, "objects.json"), filepath.Join(dir, "request.json")
	if err := os.WriteFile(objPath, objects, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(reqPath, review, 0o644); err != nil {
		return err
	}
	args := append([]string{"eval", "-f", objPath, "--request", reqPath, "-o", "json", "--service-map", t.svcMap}, t.flags...)
	args = append(args, impersonatorFlags(sc)...)
	if unlistedService(sc) != "" {
		// the server calls it and fails: eval does the same when asked
		args = append(args, "--call-unreachable-webhooks")
	}
	cmd := exec.Command(t.admitd, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		return t.setupError(sc, fmt.Sprintf("admitd eval: %v: %s", err, lastLine(stderr.String())))
	}
	return fillResult(sc, stdout.Bytes(), res)
}

// setupRefused finds the Status message in admitd eval's error for an
// object it could not create: "<source>: creating <Kind> <name>: <message>".
var setupRefused = regexp.MustCompile(`: creating [A-Za-z]+ [^ :]+: (.*)$`)

// setupError is msg, or the http target's harnessError for the scenario
// when both refused the same object with the same Status message (the
// two targets word the rest differently: "creating <resource> <ns>/<name>:
// <message>"), so that diff --same-setup-error counts it as the same.
func (t *evalTarget) setupError(sc *Scenario, msg string) error {
	m := setupRefused.FindStringSubmatch(msg)
	if m == nil || t.httpResults == "" {
		return errors.New(msg)
	}
	b, err := os.ReadFile(filepath.Join(t.httpResults, sc.Area, sc.Name+".json"))
	if err != nil {
		return errors.New(msg)
	}
	var other Result
	if json.Unmarshal(b, &other) == nil && other.HarnessError != "" && strings.HasSuffix(other.HarnessError, ": "+m[1]) &&
		strings.HasPrefix(other.HarnessError, "creating ") {
		return errors.New(other.HarnessError)
	}
	return errors.New(msg)
}

// evalResult is the part of admitd eval's JSON output compared.
type evalResult struct {
	Allowed          bool                   `json:"allowed"`
	Status           *json.RawMessage       `json:"status"`
	Object           map[string]interface{} `json:"object"`
	Warnings         []string               `json:"warnings"`
	AuditAnnotations map[string]string      `json:"auditAnnotations"`
}

func fillResult(sc *Scenario, out []byte, res *Result) error {
	var r evalResult
	if err := json.Unmarshal(out, &r); err != nil {
		return fmt.Errorf("reading admitd eval's output: %v", err)
	}
	res.Allowed, res.Warnings = r.Allowed, r.Warnings
	if r.Status != nil {
		var st struct {
			Code    int32                  `json:"code"`
			Reason  string                 `json:"reason"`
			Message string                 `json:"message"`
			Details map[string]interface{} `json:"details"`
		}
		if err := json.Unmarshal(*r.Status, &st); err != nil {
			return err
		}
		res.Status = &ResultStatus{Code: st.Code, Reason: st.Reason, Message: st.Message, Details: st.Details}
	}
	if r.Allowed && r.Object != nil && (sc.Request.Operation == "CREATE" || sc.Request.Operation == "UPDATE") {
		res.Object = r.Object
	}
	res.AuditAnnotations = map[string]string{}
	for k, v := range r.AuditAnnotations {
		if !nonAdmissionAnnotation(k) {
			res.AuditAnnotations[k] = v
		}
	}
	return nil
}

func nonAdmissionAnnotation(k string) bool {
	for _, p := range nonAdmissionAnnotationPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// objectsFile is the scenario's objects (after the harness's CRDs, for
// the areas that use them) as one JSON List.
func objectsFile(sc *Scenario, repl map[string]string) ([]byte, error) {
	items := []interface{}{}
	if !RealServerOnlyAreas[sc.Area] {
		for _, doc := range strings.Split(string(crdFixtures), "\n---\n") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			var m map[string]interface{}
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				return nil, err
			}
			items = append(items, m)
		}
	}
	for _, u := range objectsOf(sc, repl) {
		withRequester(u)
		items = append(items, u.Object)
	}
	return json.Marshal(map[string]interface{}{"apiVersion": "v1", "kind": "List", "items": items})
}

// impersonator is who sends a request.impersonate: the scenario's user,
// authenticated by its token as the http target does (a user with extra
// has none: the harness's administrator sends it then), or nil.
func impersonator(sc *Scenario) *User {
	if sc.Request.Impersonate == nil {
		return nil
	}
	if u := sc.EffectiveUser(); len(u.Extra) == 0 {
		return &u
	}
	return &User{Username: adminUser, UID: adminUser, Groups: []string{"system:masters", "system:authenticated"}}
}

// impersonatorFlags are admitd eval's flags for the impersonator.
func impersonatorFlags(sc *Scenario) []string {
	u := impersonator(sc)
	if u == nil {
		return nil
	}
	flags := []string{"--impersonator", u.Username, "--impersonator-uid", u.UID}
	for _, g := range u.Groups {
		flags = append(flags, "--impersonator-group", g)
	}
	return flags
}

// withRequester names, in a CertificateSigningRequest without a
// requester, the one the http target creates it as: the harness's
// administrator (admitd eval creates a CSR that names its requester as
// that requester, and the final object of an UPDATE shows it).
func withRequester(u *unstructured.Unstructured) {
	if u.GetKind() != "CertificateSigningRequest" || u.GroupVersionKind().Group != "certificates.k8s.io" {
		return
	}
	if name, _, _ := unstructured.NestedString(u.Object, "spec", "username"); name != "" {
		return
	}
	_ = unstructured.SetNestedField(u.Object, adminUser, "spec", "username")
	_ = unstructured.SetNestedField(u.Object, adminUser, "spec", "uid")
	_ = unstructured.SetNestedStringSlice(u.Object, []string{"system:masters", "system:authenticated"}, "spec", "groups")
}

// reviewOf is the scenario's request as an admission.k8s.io/v1
// AdmissionReview, its user as the harness authenticates it (or, with
// request.impersonate, the identity impersonated, as sent in its headers);
// a CONNECT's kind is its options object's, as a server sends it.
func reviewOf(sc *Scenario, repl map[string]string) ([]byte, error) {
	rq := sc.Request
	kind, err := kindOf(sc)
	if err != nil {
		return nil, err
	}
	if rq.Operation == "CONNECT" && rq.Object != nil {
		kind = (&unstructured.Unstructured{Object: rq.Object}).GroupVersionKind()
	}
	u := sc.EffectiveUser()
	if imp := rq.Impersonate; imp != nil {
		u = *imp
	}
	user := map[string]interface{}{"username": u.Username, "uid": u.UID, "groups": u.Groups}
	if len(u.Extra) > 0 {
		user["extra"] = u.Extra
	}
	req := map[string]interface{}{
		"uid": "00000000-0000-0000-0000-000000000000", "operation": rq.Operation,
		"resource":  map[string]interface{}{"group": rq.Resource.Group, "version": rq.Resource.Version, "resource": rq.Resource.Resource},
		"kind":      map[string]interface{}{"group": kind.Group, "version": kind.Version, "kind": kind.Kind},
		"namespace": rq.Namespace, "name": rq.Name, "subResource": rq.Subresource, "dryRun": rq.DryRun, "userInfo": user,
	}
	if rq.Object != nil {
		req["object"] = Substitute(rq.Object, repl)
	}
	if len(rq.Options) > 0 {
		req["options"] = rq.Options
	}
	return json.Marshal(map[string]interface{}{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req})
}

// kindOf is the kind of the resource the request goes to.
func kindOf(sc *Scenario) (schema.GroupVersionKind, error) {
	gvr := sc.Request.Resource.S()
	if ri, ok := LookupResource(gvr); ok {
		return ri.GVK(), nil
	}
	for _, ri := range HTTPOnlyResources {
		if ri.GVR == gvr {
			return ri.GVK(), nil
		}
	}
	if k := sc.Request.Kind; k != nil {
		return schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}, nil
	}
	if o := sc.Request.Object; o != nil {
		u := unstructured.Unstructured{Object: o}
		return u.GroupVersionKind(), nil
	}
	return schema.GroupVersionKind{}, fmt.Errorf("no kind known for %v", gvr)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
