package nodesim

// podIPs are the IPs pods have, by pod key, and the IPs taken on each
// node, so that giving a pod an IP looks at its node's pods only.
type podIPs struct {
	byPod  map[string]podAddress
	onNode map[string]map[string]int // node -> IP -> how many pods have it
}

type podAddress struct{ node, ip string }

func newPodIPs() podIPs {
	return podIPs{byPod: map[string]podAddress{}, onNode: map[string]map[string]int{}}
}

// of is the IP of the pod at key, or "".
func (a podIPs) of(key string) string { return a.byPod[key].ip }

// taken reports whether a pod on node has ip.
func (a podIPs) taken(node, ip string) bool { return a.onNode[node][ip] > 0 }

// set records that the pod at key, on node, has ip.
func (a podIPs) set(key, node, ip string) {
	if a.byPod[key] == (podAddress{node, ip}) {
		return
	}
	a.forget(key)
	a.byPod[key] = podAddress{node, ip}
	if a.onNode[node] == nil {
		a.onNode[node] = map[string]int{}
	}
	a.onNode[node][ip]++
}

// forget drops the IP of the pod at key.
func (a podIPs) forget(key string) {
	old, ok := a.byPod[key]
	if !ok {
		return
	}
	delete(a.byPod, key)
	ips := a.onNode[old.node]
	if ips[old.ip]--; ips[old.ip] <= 0 {
		delete(ips, old.ip)
	}
	if len(ips) == 0 {
		delete(a.onNode, old.node)
	}
}
