package apiserver

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
)

// runChecks runs what a write through subresource of old (nil on create)
// into obj needs of the cluster (registry.Check), as upstream's
// resource.k8s.io strategies do in their validation: a namespace's label,
// read from storage, and a permission of the requesting user, asked of
// the authorizer (none: every permission is held). Their refusals come
// before the kind's validation errors.
func (s *Server) runChecks(ctx context.Context, rq *request, res *registry.Resource, obj, old runtime.Object) field.ErrorList {
	var errs field.ErrorList
	for _, c := range res.ChecksFor(rq.info.Subresource, obj, old) {
		if c.Access != nil {
			errs = append(errs, s.checkAccess(ctx, rq, c)...)
			continue
		}
		errs = append(errs, s.checkLabel(ctx, c)...)
	}
	return errs
}

var namespacesResource = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

func (s *Server) checkLabel(ctx context.Context, c registry.Check) field.ErrorList {
	res, ok := s.cfg.Catalogue.Lookup(namespacesResource)
	if !ok {
		return field.ErrorList{field.InternalError(c.Field, errors.New("namespaces are not served"))}
	}
	_, obj, err := s.readStored(ctx, res, layout.Key(res, "", c.Namespace), c.Namespace)
	if err != nil {
		return field.ErrorList{field.InternalError(c.Field, fmt.Errorf("could not retrieve namespace to verify admin access: %w", err))}
	}
	if ns, ok := obj.(*corev1.Namespace); !ok || ns.Labels[c.Label] != c.Value {
		return field.ErrorList{field.Forbidden(c.Field, c.Refusal)}
	}
	return nil
}

// checkAccess asks for each verb the check allows until one is allowed;
// a refusal quotes the first answer as upstream's Forbidden status would.
func (s *Server) checkAccess(ctx context.Context, rq *request, c registry.Check) field.ErrorList {
	if s.cfg.Authorizer == nil {
		return nil
	}
	a := c.Access
	verbs := a.Verbs(rq.user, rq.info.Verb)
	var first string
	for i, verb := range verbs {
		attrs := auth.Attributes{User: rq.user, Verb: verb, ResourceRequest: true, APIGroup: a.Group, APIVersion: rq.info.Version,
			Resource: a.Resource, Subresource: a.Subresource, Namespace: a.Namespace, Name: a.Name}
		d, reason, err := s.cfg.Authorizer.Authorize(ctx, attrs)
		if d == auth.DecisionAllow {
			return nil
		}
		if i == 0 {
			msg := reason
			switch {
			case err != nil && reason != "":
				msg = fmt.Sprintf("%v: %s", err, reason)
			case err != nil:
				msg = err.Error()
			}
			first = auth.Forbidden(attrs, msg).Error()
		}
	}
	return field.ErrorList{field.Forbidden(c.Field, a.Refused(verbs, first))}
}
