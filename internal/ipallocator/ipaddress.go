package ipallocator

import (
	"context"
	"errors"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// ControllerName is the value of the managed-by label of the IPAddresses
// the allocator makes, upstream's.
const ControllerName = "ipallocator.k8s.io"

// managerName is the field manager of an IPAddress the allocator makes:
// kube-apiserver's, whose loopback client makes them upstream.
const managerName = "kube-apiserver"

// newIPAddress is the IPAddress of name held by svc, as upstream's
// allocator makes it: the family and managed-by labels, the Service as
// parentRef, and the managedFields of kube-apiserver's create.
func newIPAddress(name string, family corev1.IPFamily, svc *corev1.Service, now metav1.Time) *networkingv1.IPAddress {
	ref := &networkingv1.ParentReference{Resource: "services", Namespace: svc.Namespace, Name: svc.Name}
	return &networkingv1.IPAddress{
		TypeMeta: metav1.TypeMeta{APIVersion: networkingv1.SchemeGroupVersion.String(), Kind: "IPAddress"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, UID: types.UID(uuid.NewUUID()), CreationTimestamp: now,
			Labels: map[string]string{networkingv1.LabelIPAddressFamily: string(family), networkingv1.LabelManagedBy: ControllerName},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: managerName, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: networkingv1.SchemeGroupVersion.String(),
				Time: &now, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: ownedFields(ref)},
			}},
		},
		Spec: networkingv1.IPAddressSpec{ParentRef: ref},
	}
}

// ownedFields are the fields of newIPAddress's object, in managedFields'
// form (the empty group and namespace are not set).
func ownedFields(ref *networkingv1.ParentReference) []byte {
	parent := `".":{}`
	if ref.Group != "" {
		parent += `,"f:group":{}`
	}
	parent += `,"f:name":{}`
	if ref.Namespace != "" {
		parent += `,"f:namespace":{}`
	}
	parent += `,"f:resource":{}`
	return []byte(`{"f:metadata":{"f:labels":{".":{},"f:` + networkingv1.LabelIPAddressFamily + `":{},"f:` + networkingv1.LabelManagedBy +
		`":{}}},"f:spec":{"f:parentRef":{` + parent + `}}}`)
}

// create stores ip unless an IPAddress of its name exists (ErrAllocated),
// and tells the cache of IPAddresses.
func (a *Allocator) create(ctx context.Context, ip *networkingv1.IPAddress) error {
	data, err := layout.Encode(ip)
	if err != nil {
		return err
	}
	kv, err := a.store.Create(ctx, layout.Key(a.ips, "", ip.Name), data)
	if errors.Is(err, storage.ErrKeyExists) {
		return ErrAllocated
	}
	if err != nil {
		return err
	}
	ip.ResourceVersion = strconv.FormatInt(kv.ModRevision, 10)
	a.addresses.Observe(ctx, a.ips.Version, false, ip)
	return nil
}

// remove deletes the IPAddress name, if there is one, and tells the cache
// of IPAddresses.
func (a *Allocator) remove(ctx context.Context, name string) error {
	_, rev, err := a.store.Delete(ctx, layout.Key(a.ips, "", name), 0)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	gone := &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: strconv.FormatInt(rev, 10)}}
	a.addresses.Observe(ctx, a.ips.Version, true, gone)
	return nil
}
