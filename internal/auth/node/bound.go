package node

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// AddVolumeAttachment records a volume attachment: its node may read it.
// One without spec.nodeName gives access to no node.
func (g *Graph) AddVolumeAttachment(va *storagev1.VolumeAttachment) {
	g.bind("AddVolumeAttachment", ref{kindVolumeAttachment, "", va.Name}, va.Spec.NodeName, va.Spec.NodeName != "")
}

// UpdateVolumeAttachment records a change of a volume attachment; only a
// change of spec.nodeName matters.
func (g *Graph) UpdateVolumeAttachment(old, va *storagev1.VolumeAttachment) {
	if old != nil && old.Spec.NodeName == va.Spec.NodeName {
		return
	}
	g.AddVolumeAttachment(va)
}

// DeleteVolumeAttachment forgets a volume attachment.
func (g *Graph) DeleteVolumeAttachment(va *storagev1.VolumeAttachment) {
	g.bind("DeleteVolumeAttachment", ref{kindVolumeAttachment, "", va.Name}, "", false)
}

// AddResourceSlice records a resource slice: the node in spec.nodeName may
// read, update and delete it. Its spec.nodeName is immutable, so there is no
// update method, as upstream has no update handler.
func (g *Graph) AddResourceSlice(s *resourcev1.ResourceSlice) {
	node := ""
	if s.Spec.NodeName != nil {
		node = *s.Spec.NodeName
	}
	g.bind("AddResourceSlice", ref{kindResourceSlice, "", s.Name}, node, node != "")
}

// DeleteResourceSlice forgets a resource slice.
func (g *Graph) DeleteResourceSlice(s *resourcev1.ResourceSlice) {
	g.bind("DeleteResourceSlice", ref{kindResourceSlice, "", s.Name}, "", false)
}

// AddPodCertificateRequest records a pod certificate request: the node in
// spec.nodeName may read it. Its spec is immutable, so there is no update
// method.
func (g *Graph) AddPodCertificateRequest(pcr *certificatesv1.PodCertificateRequest) {
	g.bind("AddPodCertificateRequest", ref{kindPodCertificateRequest, pcr.Namespace, pcr.Name}, string(pcr.Spec.NodeName), true)
}

// DeletePodCertificateRequest forgets a pod certificate request.
func (g *Graph) DeletePodCertificateRequest(pcr *certificatesv1.PodCertificateRequest) {
	g.bind("DeletePodCertificateRequest", ref{kindPodCertificateRequest, pcr.Namespace, pcr.Name}, "", false)
}

// bind records that r names node when ok, and forgets r otherwise; op
// names the operation in metrics.
func (g *Graph) bind(op string, r ref, node string, ok bool) {
	defer g.metrics.observe(op, time.Now())
	g.mu.Lock()
	defer g.mu.Unlock()
	if ok {
		g.bound[r] = node
	} else {
		delete(g.bound, r)
	}
}
