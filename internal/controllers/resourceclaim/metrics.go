package resourceclaim

import (
	"errors"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Metrics are upstream's two dynamic_resource_allocation families of the
// controller, with their names, labels and help texts: the claim creates
// it asked of the API server (k8s.io/dynamic-resource-allocation's
// resourceclaim/metrics) and the claims of its cache, counted at each
// scrape (pkg/controller/resourceclaim/metrics). They outlive a
// controller: the latest one made with them is the one counted.
type Metrics struct {
	source  atomic.Pointer[Controller]
	creates *prometheus.CounterVec
	claims  *prometheus.Desc
}

// NewMetrics returns the families, not yet served.
func NewMetrics() *Metrics {
	return &Metrics{
		creates: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dynamic_resource_allocation_resourceclaim_creates_total",
			Help: "[ALPHA] Number of ResourceClaims creation requests, categorized by creation status, admin access, and owning API group and kind (either Pod or scheduling.k8s.io/PodGroup)"},
			[]string{"status", "admin_access", "owner_api_group", "owner_api_kind"}),
		claims: prometheus.NewDesc("dynamic_resource_allocation_resource_claims",
			"[ALPHA] Number of ResourceClaims, categorized by allocation status, admin access, and source. "+
				"Source can be 'resource_claim_template' (created from a template), "+
				"'extended_resource' (extended resources), or empty (manually created by a user).",
			[]string{"allocated", "admin_access", "source"}, nil),
	}
}

// Register serves the families on reg; registering them again (the
// controller restarted under leader election) is not an error.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.creates, claimCollector{m}} {
		if err := reg.Register(c); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return err
		}
	}
	return nil
}

// created counts a create of claim asked of the API server, and whether
// it failed. A nil m counts nothing.
func (m *Metrics) created(claim *resourcev1.ResourceClaim, err error) {
	if m == nil {
		return
	}
	status := "success"
	if err != nil {
		status = "failure"
	}
	group, kind := ownerGroupKind(claim)
	m.creates.WithLabelValues(status, adminAccess(claim), group, kind).Inc()
}

// ownerGroupKind are the API group and kind of claim's controller.
func ownerGroupKind(claim *resourcev1.ResourceClaim) (string, string) {
	owner := metav1.GetControllerOfNoCopy(claim)
	if owner == nil {
		return "", ""
	}
	group, _, ok := strings.Cut(owner.APIVersion, "/")
	if !ok {
		group = ""
	}
	return group, owner.Kind
}

// adminAccess is "true" when a request of claim asks for admin access.
func adminAccess(claim *resourcev1.ResourceClaim) string {
	for _, r := range claim.Spec.Devices.Requests {
		if r.Exactly != nil && ptr.Deref(r.Exactly.AdminAccess, false) {
			return "true"
		}
	}
	return "false"
}

// claimSource is where claim came from: a template, the scheduler (for
// extended resources), or "" (a user).
func claimSource(claim *resourcev1.ResourceClaim) string {
	if claim.Annotations[resourcev1.ExtendedResourceClaimAnnotation] == "true" {
		return "extended_resource"
	}
	if claim.Annotations[resourcev1.PodResourceClaimAnnotation] != "" {
		return "resource_claim_template"
	}
	return ""
}

// claimCollector counts the claims of the controller's cache.
type claimCollector struct{ m *Metrics }

func (cc claimCollector) Describe(ch chan<- *prometheus.Desc) { ch <- cc.m.claims }

type claimLabels struct{ allocated, adminAccess, source string }

func (cc claimCollector) Collect(ch chan<- prometheus.Metric) {
	c := cc.m.source.Load()
	if c == nil {
		return
	}
	counts := map[claimLabels]int{}
	for _, claim := range c.claims.ListAll(func(*resourcev1.ResourceClaim) bool { return true }) {
		allocated := "false"
		if claim.Status.Allocation != nil {
			allocated = "true"
		}
		counts[claimLabels{allocated, adminAccess(claim), claimSource(claim)}]++
	}
	for l, n := range counts {
		ch <- prometheus.MustNewConstMetric(cc.m.claims, prometheus.GaugeValue, float64(n), l.allocated, l.adminAccess, l.source)
	}
}
