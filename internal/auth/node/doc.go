// Package node is kube-apiserver's Node authorizer (authorization mode
// "Node", 1.37 with default feature gates): it decides requests of kubelets,
// users named system:node:<name> in the group system:nodes, from a graph of
// the objects bound to each node.
//
// A node may read the secrets, configmaps, persistent volume claims, resource
// claims and service accounts that pods scheduled to it reference, the
// persistent volumes bound to those claims and the secrets those volumes
// name, and the volume attachments, resource slices and pod certificate
// requests that name it; it may request tokens for its pods' service
// accounts. Leases, CSINodes, Node and Pod objects follow fixed rules, and
// everything else falls back to static rules (the system:node ClusterRole of
// the bootstrap policy). The authorizer never denies: a request it does not
// allow gets DecisionNoOpinion, with upstream's reason, and is left to the
// next authorizer.
//
// The Graph is fed by event methods (AddPod, UpdatePod, DeletePod, AddPV,
// ...) that take k8s.io/api objects and mirror upstream's informer handlers;
// watching storage and calling them is the caller's job. Decisions read
// per-node indexes, so their cost does not grow with unrelated pods.
//
// This package does not restrict what a node writes (labels on its Node
// object, mirror pods bound to other nodes): that is the NodeRestriction
// admission plugin's job.
package node
