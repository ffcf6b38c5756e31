package noderestriction

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/pkg/admission"
)

// admitLease lets a node write only its own lease in kube-node-lease.
func (r *request) admitLease() error {
	if r.a.Namespace != "kube-node-lease" {
		return forbidden(r.a, "can only access leases in the %q system namespace", "kube-node-lease")
	}
	name := r.a.Name
	if r.a.Operation == admission.Create {
		switch l := r.a.Object.(type) {
		case *coordinationv1.Lease:
			name = l.Name
		case *coordinationv1beta1.Lease:
			name = l.Name
		default:
			return unexpectedType(r.a, r.a.Object)
		}
	}
	if name != r.node {
		return forbidden(r.a, "can only access node lease with the same name as the requesting node")
	}
	return nil
}

// admitCSINode lets a node write only its own CSINode; its status (a
// CSIVolumeHealth alpha field) not at all, that gate being off.
func (r *request) admitCSINode() error {
	name := r.a.Name
	if r.a.Operation == admission.Create {
		m, err := meta.Accessor(r.a.Object)
		if err != nil {
			return forbidden(r.a, "unable to access the object name")
		}
		name = m.GetName()
	}
	if name != r.node {
		return forbidden(r.a, "can only access CSINode with the same name as the requesting node")
	}
	if r.a.Subresource == "status" {
		return forbidden(r.a, "CSIVolumeHealth feature gate is disabled")
	}
	return nil
}

// admitResourceSlice lets a node create and delete only the slices of its
// node; the Node authorizer checks the other verbs.
func (r *request) admitResourceSlice() error {
	var obj runtime.Object
	var verb string
	switch r.a.Operation {
	case admission.Create:
		obj, verb = r.a.Object, "create"
	case admission.Delete:
		obj, verb = r.a.OldObject, "delete"
	default:
		return nil
	}
	nodeName, ok := sliceNodeName(obj)
	if !ok {
		return unexpectedType(r.a, obj)
	}
	if nodeName == nil || *nodeName != r.node {
		return admission.NewForbidden(r.a, fmt.Errorf("can only %s ResourceSlice with the same NodeName as the requesting node", verb))
	}
	return nil
}

// sliceNodeName is spec.nodeName of a ResourceSlice of any served
// version (nil when unset).
func sliceNodeName(obj runtime.Object) (*string, bool) {
	switch s := obj.(type) {
	case *resourcev1.ResourceSlice:
		return s.Spec.NodeName, true
	case *resourcev1beta2.ResourceSlice:
		return s.Spec.NodeName, true
	case *resourcev1beta1.ResourceSlice:
		if s.Spec.NodeName == "" {
			return nil, true
		}
		return &s.Spec.NodeName, true
	}
	return nil, false
}

// admitCSR lets a node create kubelet client and serving CSRs only for its
// own name.
func (r *request) admitCSR() error {
	if r.a.Operation != admission.Create {
		return nil
	}
	var signer string
	var pemBytes []byte
	switch c := r.a.Object.(type) {
	case *certificatesv1.CertificateSigningRequest:
		signer, pemBytes = c.Spec.SignerName, c.Spec.Request
	case *certificatesv1beta1.CertificateSigningRequest:
		if c.Spec.SignerName != nil {
			signer = *c.Spec.SignerName
		}
		pemBytes = c.Spec.Request
	default:
		return unexpectedType(r.a, r.a.Object)
	}
	if signer != certificatesv1.KubeletServingSignerName && signer != certificatesv1.KubeAPIServerClientKubeletSignerName {
		return nil
	}
	csr, err := parseCSR(pemBytes)
	if err != nil {
		return forbidden(r.a, "unable to parse csr: %w", err)
	}
	if csr.Subject.CommonName != nodeUserPrefix+r.node {
		return forbidden(r.a, "can only create a node CSR with CN=system:node:%s", r.node)
	}
	return nil
}

// parseCSR reads the first PEM block, which must be a certificate request.
func parseCSR(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}
