package evaluate

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// create creates u as the administrator, except a CertificateSigningRequest
// that names its requester (spec.username, as one read from a cluster
// does): the server records whoever creates a CSR there (username, uid,
// groups, extra) and keeps it on every update, so it is created by the
// administrator impersonating that requester. When the requester may not
// create it (the authorization mode checks it), the administrator does,
// with a setup warning.
func (c *cluster) create(ctx context.Context, ri dynamic.ResourceInterface, gvr schema.GroupVersionResource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if requester := csrRequester(u); requester != nil {
		client, err := dynamic.NewForConfig(c.as(*requester))
		if err != nil {
			return nil, err
		}
		stored, err := client.Resource(gvr).Create(ctx, u, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) {
			return stored, err
		}
		c.setupWarnings.HandleWarningHeader(299, "", fmt.Sprintf("CertificateSigningRequest %s: created by the administrator, as its requester %q may not: %v",
			u.GetName(), requester.Name, err))
	}
	return ri.Create(ctx, u, metav1.CreateOptions{})
}

var csrKind = schema.GroupKind{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}

// csrRequester is the requester a CertificateSigningRequest names, or nil.
func csrRequester(u *unstructured.Unstructured) *User {
	if u.GroupVersionKind().GroupKind() != csrKind {
		return nil
	}
	name, _, _ := unstructured.NestedString(u.Object, "spec", "username")
	if name == "" {
		return nil
	}
	r := &User{Name: name}
	r.UID, _, _ = unstructured.NestedString(u.Object, "spec", "uid")
	r.Groups, _, _ = unstructured.NestedStringSlice(u.Object, "spec", "groups")
	if extra, ok, _ := unstructured.NestedMap(u.Object, "spec", "extra"); ok && len(extra) > 0 {
		r.Extra = map[string][]string{}
		for k, v := range extra {
			for _, s := range list(v) {
				r.Extra[k] = append(r.Extra[k], str(s))
			}
		}
	}
	return r
}

// as is the administrator impersonating u.
func (c *cluster) as(u User) *rest.Config {
	cfg := rest.CopyConfig(c.admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: u.Name, UID: u.UID, Groups: impersonatedGroups(u), Extra: u.Extra}
	return cfg
}
