package serviceip

import "github.com/prometheus/client_golang/prometheus"

var (
	allocatedPortsDesc = prometheus.NewDesc("kube_apiserver_nodeport_allocator_allocated_ports",
		"[ALPHA] Gauge measuring the number of allocated NodePorts for Services", nil, nil)
	availablePortsDesc = prometheus.NewDesc("kube_apiserver_nodeport_allocator_available_ports",
		"[ALPHA] Gauge measuring the number of available NodePorts for Services", nil, nil)
)

// Describe and Collect make the allocator kube-apiserver's
// kube_apiserver_nodeport_allocator_allocated_ports and
// kube_apiserver_nodeport_allocator_available_ports, read when /metrics
// is scraped.
func (p *PortAllocator) Describe(ch chan<- *prometheus.Desc) {
	ch <- allocatedPortsDesc
	ch <- availablePortsDesc
}

func (p *PortAllocator) Collect(ch chan<- prometheus.Metric) {
	left := p.ports.left()
	ch <- prometheus.MustNewConstMetric(allocatedPortsDesc, prometheus.GaugeValue, float64(p.ports.size-left))
	ch <- prometheus.MustNewConstMetric(availablePortsDesc, prometheus.GaugeValue, float64(left))
}
