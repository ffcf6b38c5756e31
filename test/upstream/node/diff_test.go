package node

import (
	"fmt"
	"math/rand/v2"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/admitd/admitd/internal/auth"
)

// world is the current objects of a generated cluster, so that updates and
// deletes carry the object the populator last saw.
type world struct {
	pods   map[string]*corev1.Pod
	pvs    map[string]*corev1.PersistentVolume
	vas    map[string]*storagev1.VolumeAttachment
	slices map[string]*resourcev1.ResourceSlice
	pcrs   map[string]*certificatesv1.PodCertificateRequest
}

func newWorld() *world {
	return &world{pods: map[string]*corev1.Pod{}, pvs: map[string]*corev1.PersistentVolume{},
		vas: map[string]*storagev1.VolumeAttachment{}, slices: map[string]*resourcev1.ResourceSlice{},
		pcrs: map[string]*certificatesv1.PodCertificateRequest{}}
}

// step applies one random event to both sides and returns its description.
func (w *world) step(g gen, p *pair) string {
	switch n := g.r.IntN(100); {
	case n < 45:
		return w.podEvent(g, p)
	case n < 65:
		return w.pvEvent(g, p)
	case n < 77:
		name := g.pick(boundNames)
		old, ok := w.vas[name]
		switch {
		case ok && g.chance(30):
			p.deleteVA(old)
			delete(w.vas, name)
			return "delete va " + name
		case ok:
			va := g.va(name)
			p.updateVA(old, va)
			w.vas[name] = va
			return "update va " + name + " to " + va.Spec.NodeName
		}
		va := g.va(name)
		p.addVA(va)
		w.vas[name] = va
		return "add va " + name + " on " + va.Spec.NodeName
	case n < 89:
		name := g.pick(boundNames)
		if old, ok := w.slices[name]; ok {
			p.deleteSlice(old)
			delete(w.slices, name)
			return "delete slice " + name
		}
		s := g.slice(name)
		p.addSlice(s)
		w.slices[name] = s
		return "add slice " + name
	default:
		ns, name := g.pick(namespaces), g.pick(boundNames)
		key := ns + "/" + name
		if old, ok := w.pcrs[key]; ok {
			p.deletePCR(old)
			delete(w.pcrs, key)
			return "delete pcr " + key
		}
		o := g.pcr(ns, name)
		p.addPCR(o)
		w.pcrs[key] = o
		return "add pcr " + key + " on " + string(o.Spec.NodeName)
	}
}

func (w *world) podEvent(g gen, p *pair) string {
	ns, name := g.pick(namespaces), g.pick(podNames)
	key := ns + "/" + name
	old, ok := w.pods[key]
	switch {
	case ok && g.chance(30):
		p.deletePod(old)
		delete(w.pods, key)
		return "delete pod " + key
	case ok:
		o := g.podUpdate(old)
		p.updatePod(old, o)
		w.pods[key] = o
		return "update pod " + key + " on " + o.Spec.NodeName
	}
	o := g.pod(ns, name)
	p.addPod(o)
	w.pods[key] = o
	return "add pod " + key + " on " + o.Spec.NodeName
}

func (w *world) pvEvent(g gen, p *pair) string {
	name := g.pick(pvNames)
	old, ok := w.pvs[name]
	switch {
	case ok && g.chance(30):
		p.deletePV(old)
		delete(w.pvs, name)
		return "delete pv " + name
	case ok:
		o := g.pv(name)
		p.updatePV(old, o)
		w.pvs[name] = o
		return "update pv " + name
	}
	o := g.pv(name)
	p.addPV(o)
	w.pvs[name] = o
	return "add pv " + name
}

// resources are the resources of requests: all that the Node authorizer
// subdivides, and some that only the static rules decide.
var resources = [][2]string{
	{"", "secrets"}, {"", "configmaps"}, {"", "persistentvolumeclaims"}, {"", "persistentvolumes"},
	{"resource.k8s.io", "resourceclaims"}, {"storage.k8s.io", "volumeattachments"}, {"", "serviceaccounts"},
	{"coordination.k8s.io", "leases"}, {"storage.k8s.io", "csinodes"}, {"resource.k8s.io", "resourceslices"},
	{"", "nodes"}, {"", "pods"}, {"certificates.k8s.io", "podcertificaterequests"},
	{"", "services"}, {"", "events"}, {"authentication.k8s.io", "tokenreviews"}, {"", "endpoints"},
	{"certificates.k8s.io", "certificatesigningrequests"}, {"", "namespaces"}, {"resource.k8s.io", "deviceclasses"},
	{"discovery.k8s.io", "endpointslices"}, {"storage.k8s.io", "csidrivers"}, {"", "secrets/token"},
	// Resources of the Node authorizer named with another group.
	{"apps", "pods"}, {"storage.k8s.io", "secrets"}, {"", "resourceslices"}, {"", "leases"},
}

var verbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "escalate", "*"}

func (g gen) user() authenticationv1.UserInfo {
	u := authenticationv1.UserInfo{Username: "system:node:" + g.pick(nodeNames), Groups: []string{"system:nodes", "system:authenticated"}}
	switch g.r.IntN(20) {
	case 0:
		u.Username = "system:node:"
	case 1:
		u.Groups = []string{"system:authenticated"}
	case 2:
		u.Username = "alice"
	case 3:
		u.Username = "system:nodes:" + g.pick(nodeNames)
	}
	return u
}

func (g gen) request() auth.Attributes {
	a := auth.Attributes{User: g.user(), Verb: g.pick(verbs)}
	if g.chance(5) {
		a.Path = g.pick([]string{"/healthz", "/api", "/metrics"})
		return a
	}
	gr := resources[g.r.IntN(len(resources))]
	a.ResourceRequest, a.APIGroup, a.Resource, a.APIVersion = true, gr[0], gr[1], "v1"
	a.Subresource = g.pick([]string{"", "", "", "status", "token", "eviction", "foo"})
	a.Namespace = g.pick([]string{"", "ns1", "ns1", "ns2", "kube-node-lease"})
	vocab := [][]string{objNames, podNames, pvNames, boundNames, nodeNames, ephemeralNames}
	a.Name = g.pick(vocab[g.r.IntN(len(vocab))])
	if g.chance(30) {
		a.FieldSelector = fields.Requirements{{
			Field:    g.pick([]string{"spec.nodeName", "spec.nodeName", "metadata.name"}),
			Operator: []selection.Operator{selection.Equals, selection.DoubleEquals, selection.NotEquals}[g.r.IntN(3)],
			Value:    g.pick(nodeNames),
		}}
	}
	return a
}

// TestDifferential runs generated clusters, events and requests through
// both authorizers and compares decision, reason and error after every
// event.
func TestDifferential(t *testing.T) {
	const clusters, events, requests = 300, 60, 40
	var random, all tally
	for seed := range uint64(clusters) {
		g := gen{rand.New(rand.NewPCG(seed, 37))}
		c := comparison{t: t, p: newPair(t), seed: seed}
		w := newWorld()
		for range events {
			c.log = append(c.log, w.step(g, c.p))
			for range requests {
				c.compare(g.request(), &random)
			}
		}
		c.compareAll(&all)
	}
	t.Logf("generated requests: %d compared, %d allowed; every graph request after each cluster: %d compared, %d allowed",
		random.total, random.allowed, all.total, all.allowed)
	for _, n := range []tally{random, all} {
		if n.allowed < n.total/100 {
			t.Errorf("only %d of %d requests allowed: the generator rarely reaches the graph", n.allowed, n.total)
		}
	}
}

// tally counts compared requests.
type tally struct{ total, allowed int }

// comparison is one generated cluster and the events that built it.
type comparison struct {
	t    *testing.T
	p    *pair
	seed uint64
	log  []string
}

func (c *comparison) compare(a auth.Attributes, n *tally) {
	c.t.Helper()
	ours, theirs := c.p.decide(c.t, a)
	n.total++
	if theirs.decision == int(auth.DecisionAllow) {
		n.allowed++
	}
	if ours != theirs {
		c.t.Fatalf("seed %d, after %q:\nAuthorize(%+v)\n= %+v, upstream %+v", c.seed, c.log, a, ours, theirs)
	}
}

// TestBootstrapRules compares the static rules with upstream's NodeRules.
func TestBootstrapRules(t *testing.T) {
	got, err := nodeBootstrapRules()
	if err != nil {
		t.Fatal(err)
	}
	want := upstreamNodeRules()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("BootstrapRules() = %v\nupstream NodeRules() = %v", got, want)
	}
}

// graphResources are the requests whose answer depends on the graph.
var graphResources = []struct{ verb, group, resource, sub string }{
	{"get", "", "secrets", ""}, {"get", "", "configmaps", ""}, {"get", "", "persistentvolumeclaims", ""},
	{"patch", "", "persistentvolumeclaims", "status"}, {"get", "", "persistentvolumes", ""},
	{"get", "resource.k8s.io", "resourceclaims", ""}, {"get", "storage.k8s.io", "volumeattachments", ""},
	{"get", "", "serviceaccounts", ""}, {"create", "", "serviceaccounts", "token"}, {"get", "", "pods", ""},
	{"get", "resource.k8s.io", "resourceslices", ""}, {"get", "certificates.k8s.io", "podcertificaterequests", ""},
}

// compareAll asks, for every node, every graph resource and every name of
// the vocabulary.
func (c *comparison) compareAll(n *tally) {
	for _, node := range nodeNames {
		for _, r := range graphResources {
			for _, ns := range []string{"", "ns1", "ns2"} {
				for _, vocab := range [][]string{objNames, podNames, pvNames, boundNames, ephemeralNames} {
					for _, name := range vocab {
						c.compare(auth.Attributes{User: authenticationv1.UserInfo{Username: "system:node:" + node, Groups: []string{"system:nodes"}},
							Verb: r.verb, ResourceRequest: true, APIGroup: r.group, Resource: r.resource, Subresource: r.sub,
							Namespace: ns, Name: name}, n)
					}
				}
			}
		}
	}
}
