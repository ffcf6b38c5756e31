package resourcequota

import (
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/admission"
	ours "github.com/admitd/admitd/pkg/admission/plugins/resourcequota"
)

// resources are the kinds requests are made of.
var resources = []struct {
	gvr  schema.GroupVersionResource
	kind string
}{
	{corev1.SchemeGroupVersion.WithResource("pods"), "Pod"},
	{corev1.SchemeGroupVersion.WithResource("services"), "Service"},
	{corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), "PersistentVolumeClaim"},
	{corev1.SchemeGroupVersion.WithResource("configmaps"), "ConfigMap"},
	{resourcev1.SchemeGroupVersion.WithResource("resourceclaims"), "ResourceClaim"},
	{schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, "Widget"},
}

func (g gen) object(res string, i int) runtime.Object {
	switch res {
	case "pods":
		return g.pod(i)
	case "services":
		return g.service(i)
	case "persistentvolumeclaims":
		return g.claim(i)
	case "configmaps":
		return g.configMap(i)
	case "resourceclaims":
		return g.resourceClaim(i)
	}
	return g.widget(i)
}

// request is a random request: mostly creates, else updates (with or
// without an old resourceVersion, or no old object), subresources and dry
// runs, against 0–3 quotas and sometimes a limitedResources configuration.
func (g gen) request(i int) request {
	res := resources[g.r.IntN(len(resources))]
	r := request{name: fmt.Sprintf("gen-%d-%s", i, res.gvr.Resource), op: admission.Create, gvr: res.gvr, kind: res.kind}
	r.obj = g.object(res.gvr.Resource, i)
	if g.chance(3) {
		r.op = admission.Update
		old := g.object(res.gvr.Resource, i)
		setName(old, r.obj)
		if !g.chance(6) {
			setVersion(old, "3")
		}
		if g.chance(4) { // only a scope-relevant change
			old = r.obj.DeepCopyObject()
			setVersion(old, "3")
			if p, ok := old.(*corev1.Pod); ok {
				p.Spec.ActiveDeadlineSeconds = ptr.To(int64(60))
				if r.obj.(*corev1.Pod).Spec.ActiveDeadlineSeconds != nil {
					p.Spec.ActiveDeadlineSeconds = nil
				}
			}
			if c, ok := old.(*corev1.PersistentVolumeClaim); ok {
				c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
			}
		}
		if !g.chance(20) {
			r.old = old
		}
		switch g.r.IntN(6) {
		case 0:
			r.subresource = "status"
		case 1:
			r.subresource = "resize"
		}
	}
	r.dryRun = g.chance(12)
	for q := 0; q < g.r.IntN(4); q++ {
		r.quotas = append(r.quotas, g.quota(q, res.gvr.Resource))
	}
	if g.chance(8) {
		r.limited = g.limited()
	}
	return r
}

func (g gen) limited() []ours.LimitedResource {
	switch g.r.IntN(4) {
	case 0:
		return []ours.LimitedResource{{Resource: "pods", MatchContains: []string{"requests.cpu"}}}
	case 1:
		return []ours.LimitedResource{{Resource: "persistentvolumeclaims", MatchContains: []string{".storageclass.storage.k8s.io/requests.storage"}}}
	case 2:
		return []ours.LimitedResource{{Resource: "pods", MatchScopes: []corev1.ScopedResourceSelectorRequirement{{ScopeName: "PriorityClass", Operator: "In", Values: []string{"high"}}}}}
	}
	return []ours.LimitedResource{{APIGroup: "example.com", Resource: "widgets", MatchContains: []string{"count"}}}
}

func setName(dst, src runtime.Object) {
	d, s := dst.(interface{ SetName(string) }), src.(interface{ GetName() string })
	d.SetName(s.GetName())
}

func setVersion(o runtime.Object, rv string) {
	o.(interface{ SetResourceVersion(string) }).SetResourceVersion(rv)
}

func TestGeneratedRequests(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 600
	}
	g := gen{r: rand.New(rand.NewPCG(13, 37))}
	var s stats
	for i := 0; i < n; i++ {
		s.compare(t, g.request(i))
	}
	t.Logf("%d requests, %d refused (%d naming another of several quotas), %d charged; outcomes %v", s.cases, s.refused, s.reordered, s.charged, s.outcomes)
	if s.refused < n/10 || s.charged < n/10 {
		t.Errorf("generated requests too one-sided: %d refused, %d charged of %d", s.refused, s.charged, n)
	}
}
