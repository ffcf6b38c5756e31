package podsecurity

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/pkg/admission"
)

// configs are the plugin configurations every generated request is tried
// under: none (upstream's defaults) and one of each version, with defaults
// and exemptions.
var configs = []struct{ name, text string }{
	{"none", ""},
	{"v1", `apiVersion: pod-security.admission.config.k8s.io/v1
kind: PodSecurityConfiguration
defaults:
  enforce: baseline
  enforce-version: v1.30
  audit: restricted
  warn: baseline
exemptions:
  usernames: [exempt-user]
  runtimeClasses: [kata]
  namespaces: [exempt-a, exempt-b]
`},
	{"v1beta1", `apiVersion: pod-security.admission.config.k8s.io/v1beta1
kind: PodSecurityConfiguration
defaults:
  enforce: restricted
  warn-version: v1.25
exemptions:
  namespaces: [exempt-a]
`},
	{"v1alpha1", `{"apiVersion": "pod-security.admission.config.k8s.io/v1alpha1", "kind": "PodSecurityConfiguration",
 "defaults": {"audit": "baseline", "audit-version": "v1.22", "warn": "restricted", "warn-version": "latest"},
 "exemptions": {"runtimeClasses": ["runc"], "usernames": ["exempt-user"]}}`},
}

const (
	podNamespaces    = 10 // ns-0 … ns-9 hold pods
	labelNamespaces  = 40
	bigNamespacePods = 3010 // more than upstream's 3000 pods checked
)

// newWorld draws the namespaces (random labels, exempt ones, one with more
// pods than upstream checks) and their pods.
func newWorld(g *gen, config string) *world {
	w := &world{config: config}
	for i := range labelNamespaces {
		w.namespaces = append(w.namespaces, namespace(fmt.Sprintf("ns-%d", i), g.labels()))
	}
	w.namespaces = append(w.namespaces,
		namespace("exempt-a", map[string]string{prefix + "enforce": "restricted", prefix + "warn": "restricted"}),
		namespace("exempt-b", nil), namespace("plain", nil), namespace("big", nil))
	for i := range podNamespaces {
		for j := range g.r.IntN(16) {
			p := g.pod(fmt.Sprintf("ns-%d", i), fmt.Sprintf("pod-%d", j))
			g.owned(p)
			w.pods = append(w.pods, p)
		}
	}
	base := g.pod("big", "")
	restrict(base)
	for j := range bigNamespacePods {
		p := base.DeepCopy()
		p.Name, p.GenerateName = fmt.Sprintf("big-%04d", j), ""
		w.pods = append(w.pods, p)
	}
	return w
}

// requests draws the requests of one configuration.
func requests(g *gen) []namedRequest {
	var out []namedRequest
	add := func(name string, a *admission.Attributes) { out = append(out, namedRequest{name, a}) }
	nsNames := []string{"exempt-a", "exempt-b", "plain", "gone"}
	for i := range labelNamespaces {
		nsNames = append(nsNames, fmt.Sprintf("ns-%d", i))
	}
	user := func() string { return pick(g, "alice", "alice", "alice", "exempt-user", "") }
	podName := func(i int) string {
		if g.chance(0.1) {
			return ""
		}
		return fmt.Sprintf("p%d", i)
	}
	for i := range 1500 {
		add(fmt.Sprintf("pod create %d", i), podCreate(g.pod(pick(g, nsNames...), podName(i)), user()))
	}
	for i := range 400 {
		old := g.pod(pick(g, nsNames...), fmt.Sprintf("u%d", i))
		p, sub := old.DeepCopy(), ""
		switch g.r.IntN(7) {
		case 0:
			p.Labels = map[string]string{"changed": "yes"}
		case 1:
			p.Spec.Containers[0].Image = "img:new"
		case 2:
			p.Spec.Containers = append(p.Spec.Containers, g.container("added"))
		case 3:
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{
				EphemeralContainerCommon: corev1.EphemeralContainerCommon(g.container("debug2"))})
			sub = "ephemeralcontainers"
		case 4:
			p.Spec.Containers[0].Image = "img:new"
			sub = pick(g, "status", "binding", "resize", "exec", "eviction")
		case 5:
			p.Spec.InitContainers = append(p.Spec.InitContainers, g.container("init2"))
		default:
			p = g.pod(old.Namespace, old.Name)
		}
		add(fmt.Sprintf("pod update %d (%s)", i, sub), podUpdate(p, old, sub, user()))
	}
	for i := range 480 {
		obj, gvr := workload(i, g.pod(pick(g, nsNames...), podName(i)))
		m := obj.(interface{ GetName() string })
		ns := obj.(interface{ GetNamespace() string }).GetNamespace()
		switch {
		case i%10 == 9:
			old, _ := workload(i, g.pod(ns, m.GetName()))
			add(fmt.Sprintf("%s update %d", gvr.Resource, i), workloadWrite(admission.Update, obj, old, gvr, "", ns, m.GetName(), user()))
		case i%17 == 3:
			add(fmt.Sprintf("%s status %d", gvr.Resource, i), workloadWrite(admission.Update, obj, obj.DeepCopyObject(), gvr, "status", ns, m.GetName(), user()))
		default:
			add(fmt.Sprintf("%s create %d", gvr.Resource, i), workloadWrite(admission.Create, obj, nil, gvr, "", ns, m.GetName(), user()))
		}
	}
	for i := range 300 {
		name := pick(g, append(nsNames, "new-a", "new-b")...)
		add(fmt.Sprintf("namespace create %d", i), namespaceWrite(admission.Create, namespace(name, g.labels()), nil, user()))
	}
	updated := []string{"exempt-a", "exempt-b", "plain"}
	for i := range podNamespaces {
		updated = append(updated, fmt.Sprintf("ns-%d", i))
	}
	for i := range 400 {
		name := pick(g, updated...)
		add(fmt.Sprintf("namespace update %d", i), namespaceWrite(admission.Update, namespace(name, g.labels()), namespace(name, g.labels()), user()))
	}
	for _, lv := range []string{"baseline", "restricted"} {
		add("big namespace to "+lv, namespaceWrite(admission.Update, namespace("big", map[string]string{prefix + "enforce": lv, prefix + "enforce-version": "latest"}),
			namespace("big", map[string]string{prefix + "enforce": "privileged"}), "alice"))
	}
	return out
}

type namedRequest struct {
	name string
	a    *admission.Attributes
}

// TestGenerated compares both plugins over generated requests, under each
// configuration.
func TestGenerated(t *testing.T) {
	outcomes := map[string]int{}
	n := 0
	for ci, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			g := newGen(uint64(ci) + 1)
			w := newWorld(g, c.text)
			if upErr, ourErr := w.build(t); upErr != nil || ourErr != nil {
				t.Fatalf("start-up: upstream %v, admitd %v", upErr, ourErr)
			}
			for _, r := range requests(g) {
				outcomes[w.compare(t, r.name, r.a)]++
				n++
			}
			// The namespace with more pods than upstream checks reaches
			// the limit (with a second's budget, on any machine).
			o := w.runOurs(t, namespaceWrite(admission.Update, namespace("big", map[string]string{prefix + "enforce": "baseline", prefix + "enforce-version": "latest"}),
				namespace("big", map[string]string{prefix + "enforce": "privileged"}), "alice"))
			if want := "new PodSecurity enforce level only checked against the first 3000 of 3010 existing pods"; len(o.Warnings) != 1 || o.Warnings[0] != want {
				t.Errorf("big namespace: warnings %q, want %q", o.Warnings, want)
			}
		})
	}
	// A generator that broke would leave few distinct outcomes.
	if len(outcomes) < minOutcomes {
		t.Errorf("%d distinct outcomes, want at least %d", len(outcomes), minOutcomes)
	}
	t.Logf("%d requests compared, %d distinct outcomes", n, len(outcomes))
	if testing.Verbose() {
		for o, k := range outcomes {
			t.Logf("%5d %s", k, o)
		}
	}
}

const minOutcomes = 100

// fixtureDir is upstream's own table of pods that pass and fail each
// check at each level and version (k8s.io/pod-security-admission's
// test/testdata).
func fixtureDir(t *testing.T) string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/pod-security-admission").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "test", "testdata")
}

// TestFixtures sends every fixture pod of upstream's table, as a pod and as
// a deployment's template, into a namespace that enforces its level and
// version and one that audits and warns at it.
func TestFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtureDir(t), "*", "v1.*", "*", "*.yaml"))
	if err != nil || len(files) < 1000 {
		t.Fatalf("fixtures: %d files, %v", len(files), err)
	}
	w := &world{}
	seen := map[string]bool{}
	var reqs []namedRequest
	for _, f := range files {
		rel, _ := filepath.Rel(fixtureDir(t), f)
		parts := strings.Split(rel, string(filepath.Separator)) // level, version, pass|fail, file
		level, version := parts[0], parts[1]
		enforce, warn := "fx-"+level+"-"+strings.ReplaceAll(version, ".", "-"), "fxw-"+level+"-"+strings.ReplaceAll(version, ".", "-")
		if !seen[enforce] {
			seen[enforce] = true
			w.namespaces = append(w.namespaces,
				namespace(enforce, map[string]string{prefix + "enforce": level, prefix + "enforce-version": version}),
				namespace(warn, map[string]string{prefix + "warn": level, prefix + "warn-version": version, prefix + "audit": level, prefix + "audit-version": version}))
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := &corev1.Pod{}
		if err := yaml.UnmarshalStrict(data, p); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		for _, ns := range []string{enforce, warn} {
			q := p.DeepCopy()
			q.Namespace = ns
			reqs = append(reqs, namedRequest{rel + " in " + ns, podCreate(q, "alice")})
			obj, gvr := workload(0, q)
			reqs = append(reqs, namedRequest{rel + " as deployment in " + ns, workloadWrite(admission.Create, obj, nil, gvr, "", ns, q.Name, "alice")})
		}
	}
	if upErr, ourErr := w.build(t); upErr != nil || ourErr != nil {
		t.Fatalf("start-up: upstream %v, admitd %v", upErr, ourErr)
	}
	outcomes := map[string]int{}
	for _, r := range reqs {
		outcomes[w.compare(t, r.name, r.a)]++
	}
	t.Logf("%d fixture requests compared (%d files), %d distinct outcomes", len(reqs), len(files), len(outcomes))
}

// TestConfigurations compares start-up: each configuration is accepted by
// both or refused by both with the same error.
func TestConfigurations(t *testing.T) {
	const head = "apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\n"
	cases := []string{
		"",
		head,
		head + "defaults:\n  enforce: bogus\n",
		head + "defaults:\n  enforce-version: v2.0\n  audit: x\n",
		head + "defaults:\n  warn-version: 1.25\n",
		head + "exemptions:\n  namespaces: [Bad_NS, a, a, '']\n",
		head + "exemptions:\n  usernames: ['', u, u]\n  runtimeClasses: [r, r, 'Bad/Class']\n",
		head + "unknown: field\n",
		"apiVersion: pod-security.admission.config.k8s.io/v1beta1\nkind: PodSecurityConfiguration\ndefaults:\n  enforce: Restricted\n",
		"apiVersion: pod-security.admission.config.k8s.io/v1alpha1\nkind: PodSecurityConfiguration\n",
		"apiVersion: pod-security.admission.config.k8s.io/v2\nkind: PodSecurityConfiguration\n",
		"apiVersion: pod-security.admission.config.k8s.io/v1\nkind: Other\n",
		"kind: PodSecurityConfiguration\n",
		"{not yaml",
		configs[1].text, configs[2].text, configs[3].text,
	}
	for i, c := range cases {
		w := &world{config: c}
		upErr, ourErr := w.build(t)
		if fmt.Sprint(upErr) != fmt.Sprint(ourErr) {
			t.Errorf("config %d %q:\nadmitd:   %v\nupstream: %v", i, c, ourErr, upErr)
		}
	}
}
