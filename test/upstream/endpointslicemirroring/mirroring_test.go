// Package endpointslicemirroring compares admitd's EndpointSlice mirroring
// controller (internal/controllers/endpointslicemirroring) with upstream's
// pkg/controller/endpointslicemirroring on the same inputs: the slices
// upstream's controller (a fake clientset and its informers) creates for
// a random selector-less Service's Endpoints and those ours plans for it
// (split by address type and port set, per-subset limit, IP forms,
// labels, annotations, owner, generateName, endpoint fields), and the
// warnings both record.
package endpointslicemirroring

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	upstream "k8s.io/kubernetes/pkg/controller/endpointslicemirroring"

	ours "github.com/admitd/admitd/internal/controllers/endpointslicemirroring"
)

var ipPool = []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "010.0.0.4", "::ffff:10.0.0.5", "fd00::1", "fd00:0::2", "FD00::3", "bogus", "10.0.0.300"}

func randomAddress(r *rand.Rand) corev1.EndpointAddress {
	a := corev1.EndpointAddress{IP: ipPool[r.IntN(len(ipPool))]}
	if r.IntN(3) == 0 {
		a.Hostname = fmt.Sprintf("h%d", r.IntN(3))
	}
	if r.IntN(3) == 0 {
		node := fmt.Sprintf("node-%d", r.IntN(2))
		a.NodeName = &node
	}
	if r.IntN(3) == 0 {
		a.TargetRef = &corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: fmt.Sprintf("p%d", r.IntN(4)), UID: types.UID(fmt.Sprintf("uid-%d", r.IntN(4)))}
	}
	return a
}

func randomEndpoints(r *rand.Rand) *corev1.Endpoints {
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "ns", UID: "ep-uid"}}
	if r.IntN(2) == 0 {
		// (not a service-name label: the slice overrides it, so upstream's
		// controller finds the slice out of date and rewrites it on every
		// sync, as ours does; the first sync is all this test compares)
		ep.Labels = map[string]string{"team": "a", "tier": fmt.Sprint(r.IntN(2))}
	}
	if r.IntN(2) == 0 {
		ep.Annotations = map[string]string{"note": "x", corev1.EndpointsLastChangeTriggerTime: "2026-01-01T00:00:00Z", corev1.LastAppliedConfigAnnotation: "{}"}
	}
	for range r.IntN(4) {
		var s corev1.EndpointSubset
		for range r.IntN(5) {
			s.Addresses = append(s.Addresses, randomAddress(r))
		}
		for range r.IntN(3) {
			s.NotReadyAddresses = append(s.NotReadyAddresses, randomAddress(r))
		}
		for range r.IntN(3) {
			p := corev1.EndpointPort{Name: fmt.Sprintf("p%d", r.IntN(3)), Port: int32(80 + r.IntN(3)), Protocol: []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP}[r.IntN(2)]}
			if r.IntN(3) == 0 {
				app := "http"
				p.AppProtocol = &app
			}
			s.Ports = append(s.Ports, p)
		}
		ep.Subsets = append(ep.Subsets, s)
	}
	return ep
}

// normalize sorts slices and their endpoints and drops what the fake
// clientset, not the controller, sets.
func normalize(list []discovery.EndpointSlice) []discovery.EndpointSlice {
	for i := range list {
		s := &list[i]
		s.Name, s.UID, s.Generation, s.TypeMeta, s.ManagedFields, s.ResourceVersion = "", "", 0, metav1.TypeMeta{}, nil, ""
		slices.SortFunc(s.Endpoints, func(a, b discovery.Endpoint) int { return strings.Compare(jsonOf(a), jsonOf(b)) })
		if len(s.Endpoints) == 0 {
			s.Endpoints = nil
		}
	}
	// Slices whose ports differ only in appProtocol share a key: the
	// whole slice breaks the tie (both sides create them in map order).
	slices.SortFunc(list, func(a, b discovery.EndpointSlice) int {
		if c := strings.Compare(key(a), key(b)); c != 0 {
			return c
		}
		return strings.Compare(jsonOf(a), jsonOf(b))
	})
	return list
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func key(s discovery.EndpointSlice) string {
	var ports []string
	for _, p := range s.Ports {
		ports = append(ports, fmt.Sprintf("%s/%d/%s", *p.Name, *p.Port, *p.Protocol))
	}
	return string(s.AddressType) + " " + strings.Join(ports, ",")
}

// upstreamMirror runs upstream's controller on ep and its selector-less
// Service until it has created want slices and recorded wantEvents
// events (or 300 ms pass when it is to create none) and returns them
// with the events ("reason: message").
func upstreamMirror(t *testing.T, ep *corev1.Endpoints, maxPerSubset int, want, wantEvents int) ([]discovery.EndpointSlice, []string) {
	t.Helper()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: ep.Name, Namespace: ep.Namespace}}
	client := fake.NewClientset([]runtime.Object{svc, ep}...)
	generated := 0
	client.PrependReactor("create", "endpointslices", func(action clienttesting.Action) (bool, runtime.Object, error) {
		s := action.(clienttesting.CreateAction).GetObject().(*discovery.EndpointSlice)
		if s.Name == "" { // what the server does and the fake does not: names, uids, generation
			generated++
			s.Name = fmt.Sprintf("%s%05d", s.GenerateName, generated)
			s.UID, s.Generation = types.UID(s.Name), 1
		}
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	c := upstream.NewController(ctx, factory.Core().V1().Endpoints(), factory.Discovery().V1().EndpointSlices(), factory.Core().V1().Services(),
		int32(maxPerSubset), client, 0)
	factory.Start(ctx.Done())
	go c.Run(ctx, 1)
	var list *discovery.EndpointSliceList
	deadline := time.Now().Add(10 * time.Second)
	if want == 0 {
		deadline = time.Now().Add(300 * time.Millisecond)
	}
	for ; time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		var err error
		if list, err = client.DiscoveryV1().EndpointSlices(ep.Namespace).List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		if want > 0 && len(list.Items) >= want {
			break
		}
	}
	var events *corev1.EventList
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var err error
		if events, err = client.CoreV1().Events(ep.Namespace).List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		if len(events.Items) >= wantEvents || time.Now().After(deadline) {
			break
		}
	}
	var reasons []string
	for _, e := range events.Items {
		reasons = append(reasons, e.Reason+": "+e.Message)
	}
	slices.Sort(reasons)
	return normalize(list.Items), reasons
}

// oursMirror is what our controller creates on its first sync of ep,
// and the warnings it records.
func oursMirror(ep *corev1.Endpoints, maxPerSubset int) ([]discovery.EndpointSlice, []string) {
	m := ours.Desired(ep, maxPerSubset)
	var out []discovery.EndpointSlice
	for _, s := range ours.PlanSlices(ep, nil, m).Create {
		out = append(out, *s)
	}
	var reasons []string
	if m.Invalid > 0 {
		reasons = append(reasons, fmt.Sprintf("InvalidIPAddress: Skipped %d invalid IP addresses when mirroring to EndpointSlices", m.Invalid))
	}
	if m.Skipped > m.Invalid {
		reasons = append(reasons, fmt.Sprintf("TooManyAddressesToMirror: A max of %d addresses can be mirrored to EndpointSlices per Endpoints subset. %d addresses were skipped", maxPerSubset, m.Skipped))
	}
	slices.Sort(reasons)
	return normalize(out), reasons
}

// TestMirrorMatchesUpstream: 120 random Endpoints (IPv4, IPv6, mapped,
// leading-zero and invalid IPs, several subsets and port sets, labels and
// annotations), mirrored with a limit of 1 to 4 addresses a subset or
// 1000, give the same slices and warnings from upstream's controller and
// from ours.
func TestMirrorMatchesUpstream(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	mismatches, cases, withSlices, truncated, invalid := 0, 120, 0, 0, 0
	for i := range cases {
		ep := randomEndpoints(r)
		maxPerSubset := 1000
		if r.IntN(2) == 0 {
			maxPerSubset = 1 + r.IntN(4)
		}
		got, gotEvents := oursMirror(ep, maxPerSubset)
		want, wantEvents := upstreamMirror(t, ep, maxPerSubset, len(got), len(gotEvents))
		if len(want) > 0 {
			withSlices++
		}
		for _, e := range wantEvents {
			truncated += btoi(strings.HasPrefix(e, "TooMany"))
			invalid += btoi(strings.HasPrefix(e, "InvalidIP"))
		}
		d := cmp.Diff(want, got)
		if de := cmp.Diff(wantEvents, gotEvents); de != "" {
			d += "events:\n" + de
		}
		if d != "" {
			mismatches++
			if mismatches <= 3 {
				t.Errorf("case %d (max %d): differ (-upstream +ours):\n%s", i, maxPerSubset, d)
			}
		}
	}
	t.Logf("%d cases: %d with slices, %d truncated, %d with invalid IPs", cases, withSlices, truncated, invalid)
	if mismatches > 0 {
		t.Errorf("%d of %d differ", mismatches, cases)
	}
	if truncated == 0 || invalid == 0 || withSlices < cases/2 {
		t.Error("the random cases missed truncation, invalid IPs or slices")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
