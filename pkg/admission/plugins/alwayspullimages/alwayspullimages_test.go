package alwayspullimages

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

func container(name, image string, policy corev1.PullPolicy) corev1.Container {
	return corev1.Container{Name: name, Image: image, ImagePullPolicy: policy}
}

func imageVolume(name string, policy corev1.PullPolicy) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "image", PullPolicy: policy}}}
}

// mixed is upstream's test pod: every policy on init containers,
// containers and image volumes.
func mixed(policies ...corev1.PullPolicy) *corev1.Pod {
	if len(policies) == 0 {
		policies = []corev1.PullPolicy{"", corev1.PullNever, corev1.PullIfNotPresent, corev1.PullAlways}
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "123", Namespace: "test"}}
	for i, pol := range policies {
		n := string(rune('1' + i))
		p.Spec.InitContainers = append(p.Spec.InitContainers, container("init"+n, "image", pol))
		p.Spec.Containers = append(p.Spec.Containers, container("ctr"+n, "image", pol))
		p.Spec.Volumes = append(p.Spec.Volumes, imageVolume("vol"+n, pol))
	}
	return p
}

func withEphemeral(p *corev1.Pod, images ...string) *corev1.Pod {
	for _, img := range images {
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "e-" + img, Image: img}})
	}
	return p
}

func allAlways(p *corev1.Pod) *corev1.Pod {
	p = p.DeepCopy()
	for i := range p.Spec.InitContainers {
		p.Spec.InitContainers[i].ImagePullPolicy = corev1.PullAlways
	}
	for i := range p.Spec.Containers {
		p.Spec.Containers[i].ImagePullPolicy = corev1.PullAlways
	}
	for i := range p.Spec.EphemeralContainers {
		p.Spec.EphemeralContainers[i].ImagePullPolicy = corev1.PullAlways
	}
	for i := range p.Spec.Volumes {
		if p.Spec.Volumes[i].Image != nil {
			p.Spec.Volumes[i].Image.PullPolicy = corev1.PullAlways
		}
	}
	return p
}

var pods = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

func TestAdmit(t *testing.T) {
	withNew := mixed()
	withNew.Spec.Containers[0].Image = "new"
	admissiontest.Run(t, Plugin{}, []admissiontest.Case{
		{Name: "create", Attributes: admissiontest.Create(withEphemeral(mixed(), "debug")).Attributes(), WantObject: allAlways(withEphemeral(mixed(), "debug"))},
		{Name: "update with a new image", Attributes: admissiontest.Update(withNew.DeepCopy(), mixed()).Attributes(), WantObject: allAlways(withNew)},
		{Name: "update without new image", Attributes: admissiontest.Update(mixed(), mixed()).Attributes(), WantObject: mixed()},
		{Name: "subresource", Attributes: admissiontest.Update(mixed(), mixed()).Resource(pods, "ephemeralcontainers").Attributes(), WantObject: mixed()},
		{Name: "other resource", Attributes: admissiontest.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "test"}}).Attributes()},
		{Name: "not a pod", Attributes: admissiontest.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "test"}}).Resource(pods, "").Attributes(),
			WantErr: "Resource was marked with kind Pod but was unable to be converted", WantCode: 400},
	})
}

func TestValidate(t *testing.T) {
	a := admissiontest.Create(withEphemeral(mixed(corev1.PullNever, corev1.PullAlways), "debug")).Attributes()
	err := Plugin{}.Validate(t.Context(), a)
	const want = `[` +
		`pods "123" is forbidden: spec.initContainers[0].imagePullPolicy: Unsupported value: "Never": supported values: "Always", ` +
		`pods "123" is forbidden: spec.containers[0].imagePullPolicy: Unsupported value: "Never": supported values: "Always", ` +
		`pods "123" is forbidden: spec.ephemeralContainers[0].imagePullPolicy: Unsupported value: "": supported values: "Always", ` +
		`pods "123" is forbidden: spec.volumes[0].image.pullPolicy: Unsupported value: "Never": supported values: "Always"]`
	if err == nil || err.Error() != want {
		t.Fatalf("Validate = %v, want %s", err, want)
	}
	// The aggregate is no API status: the client gets a 500.
	if _, ok := err.(interface{ Status() metav1.Status }); ok {
		t.Errorf("Validate returned an API status, want a plain aggregate")
	}
	one := admissiontest.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{container("c", "i", corev1.PullIfNotPresent)}}}).Attributes()
	const wantOne = `pods "p" is forbidden: spec.containers[0].imagePullPolicy: Unsupported value: "IfNotPresent": supported values: "Always"`
	if err := (Plugin{}).Validate(t.Context(), one); err == nil || err.Error() != wantOne {
		t.Errorf("Validate = %v, want %s", err, wantOne)
	}
	if err := (Plugin{}).Validate(t.Context(), admissiontest.Create(allAlways(mixed())).Attributes()); err != nil {
		t.Errorf("Validate(all Always) = %v, want nil", err)
	}
	if err := (Plugin{}).Validate(t.Context(), admissiontest.Update(mixed(), mixed()).Attributes()); err != nil {
		t.Errorf("Validate(update without new image) = %v, want nil", err)
	}
}
