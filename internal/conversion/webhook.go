package conversion

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/rest"
)

// webhookConverter is conversion strategy Webhook.
type webhookConverter struct {
	crdName        string
	client         *rest.RESTClient
	reviewVersions []string
	metrics        *Metrics
}

// Convert sends the objects not in gv in one ConversionReview and puts the
// checked answers in their place. A single object whose only fields are
// apiVersion and kind is relabelled without a call, as upstream.
func (c *webhookConverter) Convert(ctx context.Context, objs []*unstructured.Unstructured, gv schema.GroupVersion) (err error) {
	desired := gv.String()
	if len(objs) == 1 && isEmptyObject(objs[0]) {
		objs[0].SetAPIVersion(desired)
		return nil
	}
	start := time.Now()
	var pending []int
	for i, o := range objs {
		if o.GetAPIVersion() != desired {
			pending = append(pending, i)
		}
	}
	if len(pending) == 0 {
		c.metrics.observe(time.Since(start), "")
		return nil
	}
	call := &webhookCall{in: objs, pending: pending, gv: gv, gvk: objs[pending[0]].GroupVersionKind()}
	defer func() { c.metrics.observeCRD(c.crdName, call.gvk.Version, gv.Version, time.Since(start), err) }()
	out, failure, err := c.convert(ctx, call)
	if failure != "" {
		c.metrics.observe(time.Since(start), failure)
	}
	if err != nil {
		return err
	}
	c.metrics.observe(time.Since(start), "")
	for n, i := range pending {
		objs[i] = out[n]
	}
	return nil
}

// convert sends the review and checks every converted object; failure is
// the metrics' failure type of an error from the webhook's side.
func (c *webhookConverter) convert(ctx context.Context, call *webhookCall) (out []*unstructured.Unstructured, failure string, err error) {
	converted, failure, err := c.send(ctx, call)
	if err != nil {
		return nil, failure, err
	}
	out = make([]*unstructured.Unstructured, len(call.pending))
	for n, raw := range converted {
		if out[n], err = call.check(n, raw); err != nil {
			return nil, failureInvalidConverted, err
		}
	}
	return out, "", nil
}

// webhookCall is one review: the objects at pending, to convert to gv.
type webhookCall struct {
	in      []*unstructured.Unstructured
	pending []int
	gv      schema.GroupVersion
	gvk     schema.GroupVersionKind // named in errors
}

// list is whether the review carries several objects, which upstream's
// messages word as a list conversion.
func (w *webhookCall) list() bool { return len(w.pending) > 1 }

// send posts the review and returns the list of converted objects, of
// the right length.
func (c *webhookConverter) send(ctx context.Context, w *webhookCall) ([]runtime.RawExtension, string, error) {
	objects := make([]runtime.RawExtension, len(w.pending))
	for n, i := range w.pending {
		objects[n] = runtime.RawExtension{Object: w.in[i]}
	}
	uid := uuid.NewUUID()
	request, answer, err := newReview(c.reviewVersions, objects, w.gv.String(), uid)
	if err != nil {
		return nil, "", err
	}
	if err := c.client.Post().Body(request).Do(ctx).Into(answer); err != nil {
		return nil, failureCall, fmt.Errorf("conversion webhook for %v failed: %v", w.gvk, err)
	}
	converted, err := convertedObjects(uid, answer)
	if err != nil {
		return nil, failureMalformed, fmt.Errorf("conversion webhook for %v failed: %v", w.gvk, err)
	}
	if len(converted) != len(objects) {
		return nil, failurePartial, fmt.Errorf("conversion webhook for %v returned %d objects, expected %d", w.gvk, len(converted), len(objects))
	}
	return converted, "", nil
}

// check decodes and checks the n-th converted object, with upstream's
// messages (worded per object or per list item).
func (w *webhookCall) check(n int, raw runtime.RawExtension) (*unstructured.Unstructured, error) {
	original := w.in[w.pending[n]]
	what := "invalid object at index 0"
	if w.list() {
		what = fmt.Sprintf("invalid converted object at index %v", n)
	}
	obj, err := rawObject(raw)
	if err != nil {
		if !w.list() {
			return nil, err
		}
		return nil, fmt.Errorf("conversion webhook for %v returned %s: %v", w.gvk, what, err)
	}
	if got := obj.GetObjectKind().GroupVersionKind().GroupVersion(); got != w.gv {
		return nil, fmt.Errorf("conversion webhook for %v returned %s: invalid groupVersion (expected %v, received %v)", w.gvk, what, w.gv, got)
	}
	if want, got := original.GetKind(), obj.GetObjectKind().GroupVersionKind().Kind; want != got {
		return nil, fmt.Errorf("conversion webhook for %v returned %s: invalid kind (expected %v, received %v)", w.gvk, what, want, got)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("conversion webhook for %v returned %s: invalid type, expected=Unstructured, got=%T", w.gvk, what, obj)
	}
	if err := sameIdentity(original, u); err != nil {
		if !w.list() {
			return nil, fmt.Errorf("conversion webhook for %v returned invalid object: %v", w.gvk, err)
		}
		return nil, fmt.Errorf("conversion webhook for %v returned %s: %v", w.gvk, what, err)
	}
	if err := keepMetadata(original, u); err != nil {
		if !w.list() {
			return nil, fmt.Errorf("conversion webhook for %v returned invalid metadata: %v", w.gvk, err)
		}
		return nil, fmt.Errorf("conversion webhook for %v returned invalid metadata in object at index %v: %v", w.gvk, n, err)
	}
	return u, nil
}

// isEmptyObject is an object with apiVersion and kind only.
func isEmptyObject(u *unstructured.Unstructured) bool {
	if len(u.Object) != 2 {
		return false
	}
	_, hasKind := u.Object["kind"]
	_, hasVersion := u.Object["apiVersion"]
	return hasKind && hasVersion
}
