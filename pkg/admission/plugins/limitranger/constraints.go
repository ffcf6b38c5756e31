package limitranger

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// The checks below produce upstream's messages word for word. Upstream
// walks each item's min, max and ratio maps in Go's random map order, so
// the order of several violations in one message varies between its
// requests; admitd walks them by resource name.

// validatePod checks the Container and Pod items of lr against pod.
func validatePod(lr *compiledRange, pod *corev1.Pod, opts Options) error {
	var errs []error
	for i := range lr.items {
		item := &lr.items[i]
		switch item.typ {
		case corev1.LimitTypeContainer:
			for j := range pod.Spec.Containers {
				r := &pod.Spec.Containers[j].Resources
				errs = checkItem(errs, item, r.Requests, r.Limits)
			}
			for j := range pod.Spec.InitContainers {
				r := &pod.Spec.InitContainers[j].Resources
				errs = checkItem(errs, item, r.Requests, r.Limits)
			}
		case corev1.LimitTypePod:
			errs = checkItem(errs, item, podRequests(pod, opts), podLimits(pod, opts))
		}
	}
	return utilerrors.NewAggregate(errs)
}

// checkItem appends the min, max and ratio violations of item by requests
// and limits to errs.
func checkItem(errs []error, item *compiledItem, requests, limits corev1.ResourceList) []error {
	t := string(item.typ)
	for _, b := range item.min {
		if err := minConstraint(t, b.name, b.q, requests, limits); err != nil {
			errs = append(errs, err)
		}
	}
	for _, b := range item.max {
		if err := maxConstraint(t, b.name, b.q, requests, limits); err != nil {
			errs = append(errs, err)
		}
	}
	for _, b := range item.ratio {
		if err := ratioConstraint(t, b.name, b.q, requests, limits); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// validateClaim checks the PersistentVolumeClaim items of lr against the
// claim's requests; a claim's limits are not user input and not checked.
func validateClaim(lr *compiledRange, pvc *corev1.PersistentVolumeClaim) error {
	var errs []error
	requests := pvc.Spec.Resources.Requests
	for i := range lr.items {
		item := &lr.items[i]
		if item.typ != corev1.LimitTypePersistentVolumeClaim {
			continue
		}
		t := string(item.typ)
		for _, b := range item.min {
			if err := minConstraint(t, b.name, b.q, requests, nil); err != nil {
				errs = append(errs, err)
			}
		}
		for _, b := range item.max {
			if err := maxRequestConstraint(t, b.name, b.q, requests); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return utilerrors.NewAggregate(errs)
}

// commonPrecision returns request, limit and enforced at a common precision:
// milli-units when none of them would overflow, else whole units.
func commonPrecision(request, limit, enforced resource.Quantity) (int64, int64, int64) {
	r, l, e := request.Value(), limit.Value(), enforced.Value()
	if r <= resource.MaxMilliValue && l <= resource.MaxMilliValue && e <= resource.MaxMilliValue {
		return request.MilliValue(), limit.MilliValue(), enforced.MilliValue()
	}
	return r, l, e
}

func minConstraint(limitType string, name corev1.ResourceName, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[name]
	lim, hasLim := limits[name]
	r, l, e := commonPrecision(req, lim, enforced)
	switch {
	case !hasReq:
		return fmt.Errorf("minimum %s usage per %s is %s.  No request is specified", name, limitType, enforced.String())
	case r < e:
		return fmt.Errorf("minimum %s usage per %s is %s, but request is %s", name, limitType, enforced.String(), req.String())
	case hasLim && l < e:
		return fmt.Errorf("minimum %s usage per %s is %s, but limit is %s", name, limitType, enforced.String(), lim.String())
	}
	return nil
}

func maxConstraint(limitType string, name corev1.ResourceName, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[name]
	lim, hasLim := limits[name]
	r, l, e := commonPrecision(req, lim, enforced)
	switch {
	case !hasLim:
		return fmt.Errorf("maximum %s usage per %s is %s.  No limit is specified", name, limitType, enforced.String())
	case l > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but limit is %s", name, limitType, enforced.String(), lim.String())
	case hasReq && r > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, limitType, enforced.String(), req.String())
	}
	return nil
}

// maxRequestConstraint is the max check of a resource without limits
// (claims): the request must exist and not exceed enforced.
func maxRequestConstraint(limitType string, name corev1.ResourceName, enforced resource.Quantity, requests corev1.ResourceList) error {
	req, hasReq := requests[name]
	r, _, e := commonPrecision(req, resource.Quantity{}, enforced)
	switch {
	case !hasReq:
		return fmt.Errorf("maximum %s usage per %s is %s.  No request is specified", name, limitType, enforced.String())
	case r > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, limitType, enforced.String(), req.String())
	}
	return nil
}

func ratioConstraint(limitType string, name corev1.ResourceName, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[name]
	lim, hasLim := limits[name]
	r, l, _ := commonPrecision(req, lim, enforced)
	if !hasReq || r == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", name, limitType, enforced.String())
	}
	if !hasLim || l == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", name, limitType, enforced.String())
	}
	ratio := float64(l) / float64(r)
	shown := ratio
	limitRatio := float64(enforced.Value())
	if enforced.Value() <= resource.MaxMilliValue {
		ratio *= 1000
		limitRatio = float64(enforced.MilliValue())
	}
	if ratio > limitRatio {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but provided ratio is %f", name, limitType, enforced.String(), shown)
	}
	return nil
}
