package imagepolicywebhook

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	upadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/admitd/admitd/pkg/admission"
)

// benchPod is a pod of three containers and an image-policy annotation,
// whose review the backend has answered once (the cached path, which is
// what almost every pod create takes).
func benchPod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop",
		Annotations: map[string]string{"team.image-policy.k8s.io/ticket": "INC-1", "other": "x"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "nginx:1.27"}, {Name: "b", Image: "envoy:1.30"}},
			InitContainers: []corev1.Container{{Name: "i", Image: "busybox:1.36"}}}}
}

func BenchmarkCachedReview(b *testing.B) {
	be := newBackend(b, true)
	p := newPair(b, quick(1800, false).config(be.trusted(b)))
	pod := benchPod()
	b.Run("upstream", func(b *testing.B) {
		internal := toInternal(b, pod)
		ctx := context.Background()
		for b.Loop() {
			attrs := upadmission.NewAttributesRecord(internal, nil, corev1.SchemeGroupVersion.WithKind("Pod"), "shop", "web",
				podsResource, "", upadmission.Create, nil, false, &user.DefaultInfo{Name: "u"})
			if err := p.up.Validate(ctx, attrs, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("admitd", func(b *testing.B) {
		ctx := context.Background()
		for b.Loop() {
			a := &admission.Attributes{Name: "web", Namespace: "shop", Resource: podsResource, Operation: admission.Create,
				Object: pod, Record: admission.NewRecord()}
			if err := p.ours.Validate(ctx, a); err != nil {
				b.Fatal(err)
			}
		}
	})
}
