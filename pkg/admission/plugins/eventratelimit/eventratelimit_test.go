package eventratelimit

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	"github.com/admitd/admitd/pkg/admission/plugins/eventratelimit/v1alpha1"
)

// req is one request of a sequence: an event (core unless events is set) in
// namespace ns by user, after waiting delay, wanted refused with the
// message want ("" = admitted).
type req struct {
	ns, user, component string
	events, dryRun      bool
	update              bool
	delay               time.Duration
	want                string
}

func (r req) attributes() *admission.Attributes {
	var b *admissiontest.Builder
	if r.events {
		e := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "e"}}
		b = admissiontest.Create(e)
	} else {
		e := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "e"}, Source: corev1.EventSource{Component: r.component}}
		if r.update {
			b = admissiontest.Update(e, e)
		} else {
			b = admissiontest.Create(e)
		}
	}
	b = b.User(r.user)
	if r.dryRun {
		b = b.DryRun()
	}
	return b.Attributes()
}

func TestValidate(t *testing.T) {
	server := v1alpha1.Limit{Type: v1alpha1.ServerLimitType, QPS: 1, Burst: 2}
	cases := []struct {
		name   string
		limits []v1alpha1.Limit
		reqs   []req
	}{
		{"server limit", []v1alpha1.Limit{server}, []req{{}, {update: true}, {want: "Too many requests: limit reached on type Server for key "}, {delay: time.Second}}},
		{"dry-run and events.k8s.io not counted", []v1alpha1.Limit{server}, []req{{dryRun: true}, {events: true}, {events: true}, {events: true}, {}, {}, {want: "Too many requests: limit reached on type Server for key "}, {dryRun: true}}},
		{"namespace limit", []v1alpha1.Limit{{Type: v1alpha1.NamespaceLimitType, QPS: 1, Burst: 1, CacheSize: 2}}, []req{
			{ns: "a"}, {ns: "a", want: "Too many requests: limit reached on type Namespace for key a"}, {ns: "b"},
			{ns: "c"}, // evicts a
			{ns: "a"}}},
		{"user limit", []v1alpha1.Limit{{Type: v1alpha1.UserLimitType, QPS: 1, Burst: 1}}, []req{
			{user: "alice"}, {user: "bob"}, {user: "alice", want: "Too many requests: limit reached on type User for key alice"}}},
		{"source and object limit", []v1alpha1.Limit{{Type: v1alpha1.SourceAndObjectLimitType, QPS: 1, Burst: 1}}, []req{
			{component: "kubelet"}, {component: "kubelet", want: "Too many requests: limit reached on type SourceAndObject for key kubelet"}, {component: "other"}}},
		{"two limits refuse together", []v1alpha1.Limit{server, {Type: v1alpha1.NamespaceLimitType, QPS: 1, Burst: 1}}, []req{
			{ns: "a"}, {ns: "a", want: "Too many requests: limit reached on type Namespace for key a"},
			{ns: "a", want: "Too many requests: [limit reached on type Server for key , limit reached on type Namespace for key a]"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Now())
			p := New(&v1alpha1.Configuration{Limits: tc.limits}, clk)
			for i, r := range tc.reqs {
				clk.Step(r.delay)
				a := r.attributes()
				if !p.Handles(a.Operation) {
					t.Fatalf("request %d: Handles(%s) = false", i, a.Operation)
				}
				err := p.Validate(context.Background(), a)
				got := ""
				if err != nil {
					got = err.Error()
					var se *apierrors.StatusError
					if !errors.As(err, &se) || se.ErrStatus.Code != 429 || se.ErrStatus.Reason != metav1.StatusReasonTooManyRequests || se.ErrStatus.Details != nil {
						t.Errorf("request %d: error = %#v, want a bare 429 TooManyRequests", i, err)
					}
				}
				if got != r.want {
					t.Errorf("request %d: Validate = %q, want %q", i, got, r.want)
				}
			}
		})
	}
}

func TestConfiguration(t *testing.T) {
	cases := []struct {
		name, config string
		nilConfig    bool
		wantErr      string
		want         []v1alpha1.Limit
	}{
		{name: "no configuration", nilConfig: true, wantErr: "limits: Invalid value: null: must not be empty"},
		{name: "yaml", config: `apiVersion: eventratelimit.admission.k8s.io/v1alpha1
kind: Configuration
limits:
- type: Namespace
  qps: 50
  burst: 100
  cacheSize: 2000
- type: User
  qps: 10
  burst: 50
  unknownField: ignored
`, want: []v1alpha1.Limit{{Type: v1alpha1.NamespaceLimitType, QPS: 50, Burst: 100, CacheSize: 2000}, {Type: v1alpha1.UserLimitType, QPS: 10, Burst: 50}}},
		{name: "json", config: `{"apiVersion":"eventratelimit.admission.k8s.io/v1alpha1","kind":"Configuration","limits":[{"type":"Server","qps":1,"burst":1}]}`,
			want: []v1alpha1.Limit{{Type: v1alpha1.ServerLimitType, QPS: 1, Burst: 1}}},
		{name: "empty limits", config: "apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\nlimits: []\n",
			wantErr: "limits: Invalid value: []: must not be empty"},
		{name: "invalid limits", config: `apiVersion: eventratelimit.admission.k8s.io/v1alpha1
kind: Configuration
limits:
- type: Pod
  qps: 0
  burst: -1
  cacheSize: -1
- type: Server
  qps: 1
  burst: 1
  cacheSize: -1
`, wantErr: `[limits[0].type: Unsupported value: "Pod": supported values: "Server", "Namespace", "User", "SourceAndObject", limits[0].burst: Invalid value: -1: must be positive, limits[0].qps: Invalid value: 0: must be positive, limits[0].cacheSize: Invalid value: -1: must not be negative]`},
		{name: "other version", config: "apiVersion: eventratelimit.admission.k8s.io/v1\nkind: Configuration\n",
			wantErr: `no kind "Configuration" is registered for version "eventratelimit.admission.k8s.io/v1" in scheme "pkg/runtime/scheme.go:111"`},
		{name: "no kind", config: "apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nlimits: []\n", wantErr: "Object 'Kind' is missing in"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := admission.NewRegistry()
			Register(r)
			pc := admission.PluginContext{}
			var cfg func(string) io.Reader
			if !tc.nilConfig {
				cfg = func(string) io.Reader { return strings.NewReader(tc.config) }
			}
			_, err := r.NewChain([]string{Name}, pc, cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("NewChain = %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c, err := LoadConfiguration(strings.NewReader(tc.config))
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Limits) != len(tc.want) {
				t.Fatalf("Limits = %+v, want %+v", c.Limits, tc.want)
			}
			for i := range tc.want {
				if c.Limits[i] != tc.want[i] {
					t.Errorf("Limits[%d] = %+v, want %+v", i, c.Limits[i], tc.want[i])
				}
			}
		})
	}
}

// TestConcurrent: a bucket of burst n admits exactly n of many concurrent
// requests.
func TestConcurrent(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Now())
	p := New(&v1alpha1.Configuration{Limits: []v1alpha1.Limit{{Type: v1alpha1.NamespaceLimitType, QPS: 1, Burst: 10}}}, clk)
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted := 0
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if p.Validate(context.Background(), req{ns: "a"}.attributes()) == nil {
				mu.Lock()
				admitted++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if admitted != 10 {
		t.Errorf("admitted %d of 100 concurrent requests, want 10", admitted)
	}
}

func FuzzLoadConfiguration(f *testing.F) {
	f.Add("apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\nlimits:\n- {type: Server, qps: 1, burst: 1}\n")
	f.Add(`{"apiVersion":"eventratelimit.admission.k8s.io/v1alpha1","kind":"Configuration","limits":[{"type":"User","qps":-1}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		c, err := LoadConfiguration(strings.NewReader(s))
		if err != nil {
			return
		}
		if len(Validate(c)) == 0 {
			New(c, testingclock.NewFakeClock(time.Now())) // a valid configuration builds
		}
	})
}
