package ephemeral

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/controllers/controllertest"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

func podWithEphemeral(name string) *corev1.Pod {
	tmpl := &corev1.PersistentVolumeClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"type": "scratch"}, Annotations: map[string]string{"note": "n"}},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: tmpl}}}}}}
}

func start(t *testing.T) *controllertest.Server {
	t.Helper()
	s := controllertest.Start(t)
	client, recorder := s.Controller(User, Component)
	c, err := New(Config{Store: s.Store, Catalogue: s.Catalogue, Client: client, Recorder: recorder, Log: s.Log})
	if err != nil {
		t.Fatal(err)
	}
	go c.Run(s.Ctx)
	return s
}

// A pod's ephemeral volume gets its claim "<pod>-<volume>", from the
// template and controlled by the pod.
func TestClaimCreatedForThePod(t *testing.T) {
	s := start(t)
	pod, err := s.Admin.CoreV1().Pods("default").Create(s.Ctx, podWithEphemeral("web"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var claim *corev1.PersistentVolumeClaim
	controllertest.Eventually(t, 10*time.Second, "the claim web-scratch", func() (bool, string) {
		claim, err = s.Admin.CoreV1().PersistentVolumeClaims("default").Get(s.Ctx, "web-scratch", metav1.GetOptions{})
		return err == nil, "not created"
	})
	if !metav1.IsControlledBy(claim, pod) || *claim.OwnerReferences[0].BlockOwnerDeletion != true {
		t.Errorf("owner references %+v, want the pod as controller blocking its deletion", claim.OwnerReferences)
	}
	if claim.Labels["type"] != "scratch" || claim.Annotations["note"] != "n" || claim.Spec.Resources.Requests.Storage().String() != "1Gi" {
		t.Errorf("claim %+v is not the template's", claim)
	}
	claims, err := s.Admin.CoreV1().PersistentVolumeClaims("default").List(s.Ctx, metav1.ListOptions{})
	if err != nil || len(claims.Items) != 1 {
		t.Fatalf("claims %v, %v; want the ephemeral volume's alone", claims, err)
	}
}

// A claim of the name that is not the pod's is reported on the pod, and
// once it is deleted the pod's own is created.
func TestForeignClaimReportedThenReplaced(t *testing.T) {
	s := start(t)
	foreign := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "db-scratch", Namespace: "default"},
		Spec: podWithEphemeral("x").Spec.Volumes[1].Ephemeral.VolumeClaimTemplate.Spec}
	if _, err := s.Admin.CoreV1().PersistentVolumeClaims("default").Create(s.Ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err := s.Admin.CoreV1().Pods("default").Create(s.Ctx, podWithEphemeral("db"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, 10*time.Second, "a FailedBinding event on the pod", func() (bool, string) {
		events, err := s.Admin.CoreV1().Events("default").List(s.Ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range events.Items {
			if e.Reason == "FailedBinding" && e.InvolvedObject.UID == pod.UID && e.Source.Component == Component {
				return true, ""
			}
		}
		return false, "none"
	})
	if err := s.Admin.CoreV1().PersistentVolumeClaims("default").Delete(s.Ctx, "db-scratch", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, 10*time.Second, "the pod's own claim", func() (bool, string) {
		claim, err := s.Admin.CoreV1().PersistentVolumeClaims("default").Get(s.Ctx, "db-scratch", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "not created"
		}
		return err == nil && metav1.IsControlledBy(claim, pod), "not the pod's"
	})
}

// A deleted claim requeues the pods whose volumes name or create it, and
// only those (upstream's pod-pvc index).
func TestClaimDeletedRequeuesItsPods(t *testing.T) {
	s := controllertest.Start(t)
	client, recorder := s.Controller(User, Component)
	c, err := New(Config{Store: s.Store, Catalogue: s.Catalogue, Client: client, Recorder: recorder, Log: s.Log})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := s.Catalogue.Lookup(corev1.SchemeGroupVersion.WithResource("pods"))
	var kvs []storage.KeyValue
	for i, pod := range []*corev1.Pod{podWithEphemeral("web"), podWithEphemeral("db")} {
		pod.APIVersion, pod.Kind = "v1", "Pod"
		value, err := layout.Encode(pod)
		if err != nil {
			t.Fatal(err)
		}
		kvs = append(kvs, storage.KeyValue{Key: layout.Key(res, pod.Namespace, pod.Name), Value: value, ModRevision: int64(i + 1)})
	}
	c.pods.Reset(kvs)
	for c.queue.Len() > 0 { // the adds of the listing
		key, _ := c.queue.Get()
		c.queue.Forget(key)
		c.queue.Done(key)
	}
	c.claimDeleted(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "web-scratch", Namespace: "default"}})
	if c.queue.Len() != 1 {
		t.Fatalf("%d pods queued, want web alone", c.queue.Len())
	}
	if key, _ := c.queue.Get(); key != "default/web" {
		t.Fatalf("queued %s, want default/web", key)
	}
	c.claimDeleted(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "default"}})
	if c.queue.Len() != 0 {
		t.Fatalf("a claim no pod uses queued %d pods", c.queue.Len())
	}
}

// A pod being deleted gets no claim.
func TestDeletingPodLeftAlone(t *testing.T) {
	pod := podWithEphemeral("gone")
	pod.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	c := &Controller{}
	c.queue = nil // enqueue must not touch the queue
	c.enqueue(pod)
}
