// Package podgc compares admitd's pod garbage collector
// (internal/controllers/podgc) with upstream's pkg/controller/podgc: the
// order pods go in, and what one pass over the same random pods and nodes
// asks of the server (status patches, deletes, node reads). Upstream's
// pass and order are unexported: upstream.go reaches them by go:linkname,
// so the comparison runs upstream's own compiled code.
package podgc

import (
	"context"
	_ "unsafe" // go:linkname

	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/controller/podgc"
)

//go:linkname upstreamGC k8s.io/kubernetes/pkg/controller/podgc.(*PodGCController).gc
func upstreamGC(gcc *podgc.PodGCController, ctx context.Context)

//go:linkname upstreamLess k8s.io/kubernetes/pkg/controller/podgc.byEvictionAndCreationTimestamp.Less
func upstreamLess(o []*corev1.Pod, i, j int) bool
