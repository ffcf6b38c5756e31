package hpa

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
)

// mapperResetPeriod is how often kube-controller-manager forgets the
// discovery its REST mapper learnt.
const mapperResetPeriod = 30 * time.Second

// targets reads and writes the scale of autoscalers' targets, as
// kube-controller-manager's: kinds are mapped to resources through the
// server's discovery (a cached, deferred mapper) and the scale
// subresource is read in the Scale kind discovery names.
type targets struct {
	mapper *restmapper.DeferredDiscoveryRESTMapper
	scales scale.ScalesGetter
}

// loopbackConfig is a client configuration whose requests go through rt,
// unthrottled.
func loopbackConfig(rt http.RoundTripper) *rest.Config {
	return &rest.Config{Host: "http://loopback", QPS: -1, Transport: rt}
}

func newTargets(rt http.RoundTripper, disc discovery.DiscoveryInterface) (*targets, error) {
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	scales, err := scale.NewForConfig(loopbackConfig(rt), mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(disc))
	if err != nil {
		return nil, err
	}
	return &targets{mapper: mapper, scales: scales}, nil
}

func (t *targets) resetEvery(ctx context.Context, period time.Duration) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			t.mapper.Reset()
		}
	}
}

// mappings are the resources of kind gk, in the mapper's preference.
func (t *targets) mappings(gk schema.GroupKind) ([]*apimeta.RESTMapping, error) {
	return t.mapper.RESTMappings(gk)
}

// get reads name's scale through the first of mappings that has one,
// returning the first mapping's error when none has.
func (t *targets) get(ctx context.Context, namespace, name string, mappings []*apimeta.RESTMapping) (*autoscalingv1.Scale, schema.GroupResource, error) {
	var first error
	for i, m := range mappings {
		gr := m.Resource.GroupResource()
		s, err := t.scales.Scales(namespace).Get(ctx, gr, name, metav1.GetOptions{})
		if err == nil {
			return s, gr, nil
		}
		if i == 0 {
			first = err
		}
	}
	if first == nil {
		first = errors.New("unrecognized resource")
	}
	return nil, schema.GroupResource{}, first
}

func (t *targets) update(ctx context.Context, namespace string, gr schema.GroupResource, s *autoscalingv1.Scale) error {
	_, err := t.scales.Scales(namespace).Update(ctx, gr, s, metav1.UpdateOptions{})
	return err
}

func (t *targets) read(ctx context.Context, namespace string, gr schema.GroupResource, name string) (*autoscalingv1.Scale, error) {
	return t.scales.Scales(namespace).Get(ctx, gr, name, metav1.GetOptions{})
}

// resourceMapper names the resource of a kind, as the custom metrics
// client asks for an object's metric.
type resourceMapper interface {
	qualifiedResource(gk schema.GroupKind) (string, error)
}

func (t *targets) qualifiedResource(gk schema.GroupKind) (string, error) {
	m, err := t.mapper.RESTMapping(gk)
	if err != nil {
		return "", fmt.Errorf("unable to map kind %s to resource: %v", gk.String(), err)
	}
	return m.Resource.GroupResource().String(), nil
}
