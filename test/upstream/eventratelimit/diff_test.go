package eventratelimit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	upadmission "k8s.io/apiserver/pkg/admission"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/eventratelimit"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	ours "github.com/admitd/admitd/pkg/admission/plugins/eventratelimit"
	"github.com/admitd/admitd/test/upstream/internal/updiff"
)

// build makes both plugins from the same configuration bytes (nil: none),
// returning their construction errors.
func build(config []byte) (upadmission.ValidationInterface, error, *admission.Chain, error) {
	ps := upadmission.NewPlugins()
	upstream.Register(ps)
	var upCfg io.Reader
	if config != nil {
		upCfg = bytes.NewReader(config)
	}
	up, upErr := ps.InitPlugin(upstream.PluginName, upCfg, upadmission.PluginInitializers{})
	var v upadmission.ValidationInterface
	if upErr == nil {
		v = up.(upadmission.ValidationInterface)
	}
	// admitd's plugin as the server builds it: through the registry, which
	// wraps a construction error as kube-apiserver does.
	r := admission.NewRegistry()
	ours.Register(r)
	var configFor func(string) io.Reader
	if config != nil {
		configFor = func(string) io.Reader { return bytes.NewReader(config) }
	}
	chain, ourErr := r.NewChain([]string{ours.Name}, admission.PluginContext{}, configFor)
	return v, upErr, chain, ourErr
}

// supported is upstream's list of limit types, in the random order of its map.
var supported = regexp.MustCompile(`supported values: ("[A-Za-z]+"(, )?)+`)

func normalize(msg string) string {
	return supported.ReplaceAllStringFunc(msg, func(s string) string {
		vals := strings.Split(strings.TrimPrefix(s, "supported values: "), ", ")
		sort.Strings(vals)
		return "supported values: " + strings.Join(vals, ", ")
	})
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return normalize(err.Error())
}

func TestConfigurations(t *testing.T) {
	head := "apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\n"
	configs := []string{
		"",
		head,
		head + "limits: []\n",
		head + "limits:\n- type: Server\n  qps: 1\n  burst: 1\n",
		head + "limits:\n- type: Server\n  qps: 1\n  burst: 1\n  cacheSize: -1\n",
		head + "limits:\n- type: Namespace\n  qps: 0\n  burst: 0\n  cacheSize: -1\n",
		head + "limits:\n- type: Pod\n  qps: 1\n  burst: 1\n",
		head + "limits:\n- type: server\n  qps: -5\n  burst: 3\n- type: User\n  qps: 2\n  burst: -1\n",
		head + "limits:\n- type: SourceAndObject\n  qps: 1\n  burst: 1\n  cacheSize: 3\n  extra: field\n",
		head + "limits:\n- type: Server\n  qps: \"1\"\n  burst: 1\n",
		head + "limits: {}\n",
		head + "limits:\n- [1, 2]\n",
		"apiVersion: eventratelimit.admission.k8s.io/v1\nkind: Configuration\nlimits: []\n",
		"apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nlimits: []\n",
		"kind: Configuration\nlimits: []\n",
		"apiVersion: v1\nkind: ConfigMap\n",
		"{\"apiVersion\":\"eventratelimit.admission.k8s.io/v1alpha1\",\"kind\":\"Configuration\",\"limits\":[{\"type\":\"User\",\"qps\":3,\"burst\":4}]}",
		"{not json",
		"a: b: c",
		"\t- bad yaml",
	}
	cases := [][]byte{nil}
	for _, c := range configs {
		cases = append(cases, []byte(c))
	}
	for i, c := range cases {
		_, upErr, _, ourErr := build(c)
		if errText(upErr) != errText(ourErr) {
			t.Errorf("config %d %q:\nupstream: %v\nadmitd:   %v", i, c, upErr, ourErr)
		}
	}
}

// req is one request of a sequence.
type req struct {
	kind            string // "core", "events", "other"
	op              admission.Operation
	ns, user        string
	dryRun          bool
	component, host string
	objKind, objNS  string
	objName, objUID string
	objAPIVersion   string
}

func (r req) attributes() *admission.Attributes {
	var b *admissiontest.Builder
	var obj runtime.Object
	switch r.kind {
	case "events":
		obj = &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "e"}, ReportingController: r.component}
	case "other":
		obj = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "e"}}
	default:
		obj = &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "e"},
			Source:         corev1.EventSource{Component: r.component, Host: r.host},
			InvolvedObject: corev1.ObjectReference{Kind: r.objKind, Namespace: r.objNS, Name: r.objName, UID: types.UID(r.objUID), APIVersion: r.objAPIVersion}}
	}
	switch r.op {
	case admission.Update:
		b = admissiontest.Update(obj, obj.DeepCopyObject())
	case admission.Delete:
		b = admissiontest.Delete(obj)
	default:
		b = admissiontest.Create(obj)
	}
	if r.user != "" {
		b = b.User(r.user)
	}
	if r.dryRun {
		b = b.DryRun()
	}
	return b.Attributes()
}

// run sends reqs through both plugins and compares every outcome. The
// buckets refill at 1 qps on the real clock: a sequence runs well within a
// second, so no bucket refills by a whole token during it.
func run(t *testing.T, name string, limits string, reqs []req) int {
	t.Helper()
	cfg := "apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\nlimits:\n" + limits
	up, upErr, p, ourErr := build([]byte(cfg))
	if upErr != nil || ourErr != nil {
		t.Fatalf("%s: building: upstream %v, admitd %v", name, upErr, ourErr)
	}
	start := time.Now()
	for i, r := range reqs {
		a := r.attributes()
		ua := updiff.Attributes(t, a)
		var upRes, ourRes error
		if up.Handles(ua.GetOperation()) {
			upRes = up.Validate(context.Background(), ua, nil)
		}
		if p.Handles(a.Operation) {
			ourRes = p.Validate(context.Background(), a)
		}
		if u, o := updiff.OutcomeOf(upRes), updiff.OutcomeOf(ourRes); u != o {
			t.Errorf("%s: request %d %+v:\nupstream: %v\nadmitd:   %v", name, i, r, u, o)
		}
	}
	if time.Since(start) > 500*time.Millisecond {
		t.Logf("%s: sequence took %v: a bucket may have refilled", name, time.Since(start))
	}
	return len(reqs)
}

func TestSequences(t *testing.T) {
	ev := req{}
	n := 0
	// Upstream's own table (TestEventRateLimiting) without the refills.
	n += run(t, "server", "- {type: Server, qps: 1, burst: 3}\n", []req{ev, ev, ev, ev, {kind: "other"}, {dryRun: true}})
	n += run(t, "dry-run", "- {type: Server, qps: 1, burst: 3}\n", []req{ev, ev, {dryRun: true}, {dryRun: true}, {dryRun: true}, ev, ev, {dryRun: true}})
	n += run(t, "namespace lru", "- {type: Server, qps: 1, burst: 100}\n- {type: Namespace, qps: 1, burst: 3, cacheSize: 2}\n", []req{
		{ns: "A"}, {ns: "A"}, {ns: "B"}, {ns: "B"}, {ns: "B"}, {ns: "A"}, {ns: "B"}, {ns: "A"}, {ns: "C"}, {ns: "A"}, {ns: "B"}})
	n += run(t, "source and object lru", "- {type: Server, qps: 1, burst: 100}\n- {type: SourceAndObject, qps: 1, burst: 3, cacheSize: 2}\n", []req{
		{component: "A"}, {component: "A"}, {component: "B"}, {component: "B"}, {component: "B"}, {component: "A"}, {component: "B"}, {component: "A"}, {component: "C"}, {component: "A"}, {component: "B"}})
	for _, f := range []func(string) req{
		func(l string) req { return req{host: l} },
		func(l string) req { return req{objKind: l} },
		func(l string) req { return req{objNS: l} },
		func(l string) req { return req{objName: l} },
		func(l string) req { return req{objUID: l} },
		func(l string) req { return req{objAPIVersion: l} },
	} {
		n += run(t, "key inclusion", "- {type: Server, qps: 1, burst: 100}\n- {type: SourceAndObject, qps: 1, burst: 1, cacheSize: 10}\n", []req{f("A"), f("A"), f("B")})
	}
	n += run(t, "user", "- {type: User, qps: 1, burst: 3, cacheSize: 10}\n", []req{
		{user: "A"}, {user: "A"}, {user: "A"}, {user: "A"}, {user: "B"}, {user: ""}, {user: ""}, {user: ""}, {user: ""}})

	// Generated: random limits over random requests.
	rng := rand.New(rand.NewSource(1))
	pick := func(xs ...string) string { return xs[rng.Intn(len(xs))] }
	for s := 0; s < 300; s++ {
		var limits strings.Builder
		for _, typ := range []string{"Server", "Namespace", "User", "SourceAndObject"} {
			if rng.Intn(2) == 0 {
				continue
			}
			fmt.Fprintf(&limits, "- {type: %s, qps: 1, burst: %d, cacheSize: %d}\n", typ, 1+rng.Intn(4), rng.Intn(4))
		}
		if limits.Len() == 0 {
			limits.WriteString("- {type: Server, qps: 1, burst: 2}\n")
		}
		var reqs []req
		for i := 0; i < 5+rng.Intn(30); i++ {
			reqs = append(reqs, req{
				kind:      pick("core", "core", "core", "events", "other"),
				op:        admission.Operation(pick("CREATE", "CREATE", "UPDATE", "DELETE")),
				ns:        pick("a", "b", "c", ""),
				user:      pick("alice", "bob", "", "system:node:n"),
				dryRun:    rng.Intn(8) == 0,
				component: pick("", "kubelet", "scheduler"),
				host:      pick("", "n1"),
				objName:   pick("", "p1", "p2", "p3"),
			})
		}
		n += run(t, fmt.Sprintf("generated %d", s), limits.String(), reqs)
	}
	t.Logf("%d requests compared", n)
}
