package noderestriction

import (
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/admitd/admitd/pkg/admission"
)

// podCertRequest is the spec of a PodCertificateRequest of any version.
type podCertRequest = certificatesv1.PodCertificateRequestSpec

func podCertRequestOf(obj any) (*podCertRequest, bool) {
	switch o := obj.(type) {
	case *certificatesv1.PodCertificateRequest:
		return &o.Spec, true
	case *certificatesv1beta1.PodCertificateRequest:
		s := o.Spec
		return &podCertRequest{SignerName: s.SignerName, PodName: s.PodName, PodUID: s.PodUID,
			ServiceAccountName: s.ServiceAccountName, ServiceAccountUID: s.ServiceAccountUID,
			NodeName: s.NodeName, NodeUID: s.NodeUID}, true
	}
	return nil, false
}

// admitPodCertificateRequest lets a node create a PodCertificateRequest
// for a pod running on it, naming the current node, pod and service
// account, for a signer the pod uses or the node is authorized for. A
// mismatched UID, perhaps a stale view, is an error a retry may clear
// rather than a 403.
func (r *request) admitPodCertificateRequest() error {
	if r.a.Operation != admission.Create {
		return forbidden(r.a, "unexpected operation %v", r.a.Operation)
	}
	if r.a.Subresource != "" {
		return forbidden(r.a, "unexpected subresource %v", r.a.Subresource)
	}
	req, ok := podCertRequestOf(r.a.Object)
	if !ok {
		return unexpectedType(r.a, r.a.Object)
	}
	if err := r.checkPCRNode(req); err != nil {
		return err
	}
	pod, err := r.checkPCRPod(req)
	if err != nil {
		return err
	}
	if err := r.checkPCRServiceAccount(req, pod); err != nil {
		return err
	}
	if err := r.checkPCRSigner(pod, req); err != nil {
		return admission.NewForbidden(r.a, err)
	}
	return nil
}

func (r *request) checkPCRNode(req *podCertRequest) error {
	if string(req.NodeName) != r.node {
		return forbidden(r.a, "PodCertificateRequest.Spec.NodeName=%q, which is not the requesting node %q", req.NodeName, r.node)
	}
	node, err := get[*corev1.Node](r, nodeGetter, "", string(req.NodeName))
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("while retrieving node %q named in the PodCertificateRequest: %w", req.NodeName, err)
	}
	if err != nil {
		return forbidden(r.a, "while retrieving node %q named in the PodCertificateRequest: %w", req.NodeName, err)
	}
	if node.UID != req.NodeUID {
		return fmt.Errorf("PodCertificateRequest for pod %q names node UID %q, inconsistent with the running node (%q)", r.podKey(req), req.NodeUID, node.UID)
	}
	return nil
}

func (r *request) podKey(req *podCertRequest) string { return r.a.Namespace + "/" + req.PodName }

func (r *request) checkPCRPod(req *podCertRequest) (*corev1.Pod, error) {
	pod, err := get[*corev1.Pod](r, podGetter, r.a.Namespace, req.PodName)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("while retrieving pod %q named in the PodCertificateRequest: %w", r.podKey(req), err)
	}
	if err != nil {
		return nil, forbidden(r.a, "while retrieving pod %q named in the PodCertificateRequest: %w", r.podKey(req), err)
	}
	if req.PodUID != pod.UID {
		return nil, fmt.Errorf("PodCertificateRequest for pod %q contains pod UID (%q) which differs from running pod %q", r.podKey(req), req.PodUID, string(pod.UID))
	}
	if pod.Spec.NodeName != string(req.NodeName) {
		return nil, forbidden(r.a, "pod %q is not running on node %q named in the PodCertificateRequest", r.podKey(req), req.NodeName)
	}
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return nil, forbidden(r.a, "pod %q is a mirror pod", r.podKey(req))
	}
	return pod, nil
}

func (r *request) checkPCRServiceAccount(req *podCertRequest, pod *corev1.Pod) error {
	if req.ServiceAccountName != pod.Spec.ServiceAccountName {
		return forbidden(r.a, "PodCertificateRequest for pod %q contains serviceAccountName (%q) that differs from running pod (%q)", r.podKey(req), req.ServiceAccountName, pod.Spec.ServiceAccountName)
	}
	key := r.a.Namespace + "/" + req.ServiceAccountName
	sa, err := get[*corev1.ServiceAccount](r, saGetter, r.a.Namespace, req.ServiceAccountName)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("while retrieving service account %q named in the PodCertificateRequest: %w", key, err)
	}
	if err != nil {
		return forbidden(r.a, "while retrieving service account %q named in the PodCertificateRequest: %w", key, err)
	}
	if req.ServiceAccountUID != sa.UID {
		return fmt.Errorf("PodCertificateRequest for pod %q names service account UID %q, which differs from the running service account (%q)", r.podKey(req), req.ServiceAccountUID, sa.UID)
	}
	return nil
}

// checkPCRSigner: the pod projects a certificate of the signer, or the node
// is authorized to request them (the signer's "/" become ":" in the
// authorization check's resource).
func (r *request) checkPCRSigner(pod *corev1.Pod, req *podCertRequest) error {
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.PodCertificate != nil && s.PodCertificate.SignerName == req.SignerName {
				return nil
			}
		}
	}
	attrs := r.authorizationAttributes("request-serviceaccounts-podcertificate-signer", strings.ReplaceAll(req.SignerName, "/", ":"), req.ServiceAccountName)
	d, _, err := r.p.authz.Authorize(r.ctx, attrs)
	if d == admission.AuthorizationAllow {
		return nil
	}
	if err != nil {
		return fmt.Errorf("error authorizing %s to request podcertificaterequests for signer %q: %w", r.a.UserInfo.Username, req.SignerName, err)
	}
	return fmt.Errorf("pod %q does not mount a podCertificate projected volume for signer %q", r.podKey(req), req.SignerName)
}
