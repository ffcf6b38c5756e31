package node

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// AddPV records a persistent volume. A volume bound to a claim (with a
// claimRef) gives the nodes whose pods use that claim access to the volume
// and to the secrets the kubelet needs to mount it; an unbound one gives
// access to nothing.
func (g *Graph) AddPV(pv *corev1.PersistentVolume) {
	defer g.metrics.observe("AddPV", time.Now())
	g.mu.Lock()
	defer g.mu.Unlock()
	g.removePVLocked(pv.Name)
	c := pv.Spec.ClaimRef
	if c == nil {
		return
	}
	e := pvEntry{claim: ref{kindPVC, c.Namespace, c.Name}, secrets: pvSecrets(pv)}
	g.pvs[pv.Name] = e
	for _, s := range e.secrets {
		names := g.pvsBySecret[s]
		if names == nil {
			names = map[string]struct{}{}
			g.pvsBySecret[s] = names
		}
		names[pv.Name] = struct{}{}
	}
}

// UpdatePV records a change of a persistent volume; old is not needed.
func (g *Graph) UpdatePV(_, pv *corev1.PersistentVolume) { g.AddPV(pv) }

// DeletePV forgets a persistent volume.
func (g *Graph) DeletePV(pv *corev1.PersistentVolume) {
	defer g.metrics.observe("DeletePV", time.Now())
	g.mu.Lock()
	defer g.mu.Unlock()
	g.removePVLocked(pv.Name)
}

func (g *Graph) removePVLocked(name string) {
	old, ok := g.pvs[name]
	if !ok {
		return
	}
	delete(g.pvs, name)
	for _, s := range old.secrets {
		delete(g.pvsBySecret[s], name)
		if len(g.pvsBySecret[s]) == 0 {
			delete(g.pvsBySecret, s)
		}
	}
}

// pvSecrets lists, each once, the secrets a kubelet reads to mount pv. The
// volume source decides where a reference without a namespace points: most
// sources default to the namespace of the bound claim, Cinder, StorageOS
// and CSI do not. Secrets only the controllers read (CSI
// controllerPublishSecretRef, controllerExpandSecretRef) are not included.
func pvSecrets(pv *corev1.PersistentVolume) []ref {
	claimNS := pv.Spec.ClaimRef.Namespace
	var refs []ref
	add := func(namespace, name string) {
		r := ref{kindSecret, namespace, name}
		if name != "" && !containsRef(refs, r) {
			refs = append(refs, r)
		}
	}
	withDefault := func(r *corev1.SecretReference) {
		if r == nil {
			return
		}
		ns := r.Namespace
		if ns == "" {
			ns = claimNS
		}
		add(ns, r.Name)
	}
	asIs := func(r *corev1.SecretReference) {
		if r != nil {
			add(r.Namespace, r.Name)
		}
	}
	s := &pv.Spec.PersistentVolumeSource
	switch {
	case s.AzureFile != nil:
		ns := claimNS
		if n := s.AzureFile.SecretNamespace; n != nil && *n != "" {
			ns = *n
		}
		add(ns, s.AzureFile.SecretName)
	case s.CephFS != nil:
		withDefault(s.CephFS.SecretRef)
	case s.Cinder != nil:
		asIs(s.Cinder.SecretRef)
	case s.FlexVolume != nil:
		withDefault(s.FlexVolume.SecretRef)
	case s.RBD != nil:
		withDefault(s.RBD.SecretRef)
	case s.ScaleIO != nil:
		withDefault(s.ScaleIO.SecretRef)
	case s.ISCSI != nil:
		withDefault(s.ISCSI.SecretRef)
	case s.StorageOS != nil:
		if r := s.StorageOS.SecretRef; r != nil {
			add(r.Namespace, r.Name)
		}
	case s.CSI != nil:
		asIs(s.CSI.NodePublishSecretRef)
		asIs(s.CSI.NodeStageSecretRef)
		asIs(s.CSI.NodeExpandSecretRef)
	}
	return refs
}

func containsRef(refs []ref, r ref) bool {
	for _, x := range refs {
		if x == r {
			return true
		}
	}
	return false
}
