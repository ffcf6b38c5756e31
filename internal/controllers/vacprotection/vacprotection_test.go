package vacprotection

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/controllers/controllertest"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/storageobjectinuseprotection"
)

// start runs the controller on a server whose admission chain is plugins.
func start(t *testing.T, plugins ...admission.NamedPlugin) (*controllertest.Server, *Controller) {
	t.Helper()
	s := controllertest.Start(t, plugins...)
	c, err := New(Config{Store: s.Store, Catalogue: s.Catalogue, Client: s.Client(User), Log: s.Log})
	if err != nil {
		t.Fatal(err)
	}
	go c.Run(s.Ctx)
	return s, c
}

// waitInUse waits until the controller's caches have what names each
// class: a class deleted before they do is released (as upstream's
// controller, which reads its informers' caches, releases it).
func waitInUse(t *testing.T, c *Controller, names ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, name := range names {
		for !c.inUse(name) {
			if time.Now().After(deadline) {
				t.Fatalf("the controller's caches never saw what names class %s", name)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func createClass(t *testing.T, s *controllertest.Server, name string) {
	t.Helper()
	vac := &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: name}, DriverName: "csi.example.com", Parameters: map[string]string{"iops": "100"}}
	if _, err := s.Admin.StorageV1().VolumeAttributesClasses().Create(s.Ctx, vac, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func deleteClass(t *testing.T, s *controllertest.Server, name string) {
	t.Helper()
	if err := s.Admin.StorageV1().VolumeAttributesClasses().Delete(s.Ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// classState describes the class name: its finalizers and whether it is
// being deleted, or "gone".
func classState(s *controllertest.Server, name string) string {
	vac, err := s.Admin.StorageV1().VolumeAttributesClasses().Get(s.Ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "gone"
	}
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("finalizers %q, deleting %t", vac.Finalizers, vac.DeletionTimestamp != nil)
}

func waitClass(t *testing.T, s *controllertest.Server, name, want string) {
	t.Helper()
	controllertest.Eventually(t, 10*time.Second, "VolumeAttributesClass "+name, func() (bool, string) {
		got := classState(s, name)
		return got == want, fmt.Sprintf("%s, want %s", got, want)
	})
}

// stays checks for a while that the class name stays as want: a class in
// use must not be released.
func stays(t *testing.T, s *controllertest.Server, name, want string) {
	t.Helper()
	for range 10 {
		if got := classState(s, name); got != want {
			t.Fatalf("VolumeAttributesClass %s: %s, want it to stay %s", name, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var (
	held     = fmt.Sprintf("finalizers [%q], deleting false", Finalizer)
	deleting = fmt.Sprintf("finalizers [%q], deleting true", Finalizer)
)

func newClaim(name string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
}

func createClaim(t *testing.T, s *controllertest.Server, pvc *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
	t.Helper()
	pvc, err := s.Admin.CoreV1().PersistentVolumeClaims(pvc.Namespace).Create(s.Ctx, pvc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pvc
}

// A class created without the admission plugin gets the finalizer from
// the controller; one created with it has it already, once.
func TestNewClassGetsFinalizer(t *testing.T) {
	t.Run("without admission", func(t *testing.T) {
		s, _ := start(t)
		createClass(t, s, "gold")
		waitClass(t, s, "gold", held)
	})
	t.Run("with StorageObjectInUseProtection", func(t *testing.T) {
		s, _ := start(t, admission.NamedPlugin{Name: storageobjectinuseprotection.Name, Plugin: storageobjectinuseprotection.New()})
		createClass(t, s, "gold")
		if got := classState(s, "gold"); got != held {
			t.Fatalf("VolumeAttributesClass gold after create: %s, want %s", got, held)
		}
		stays(t, s, "gold", held)
	})
}

// A class nothing names goes as soon as it is deleted.
func TestUnusedClassIsReleased(t *testing.T) {
	s, _ := start(t)
	createClass(t, s, "gold")
	waitClass(t, s, "gold", held)
	deleteClass(t, s, "gold")
	waitClass(t, s, "gold", "gone")
}

// A deleted class named by a claim's spec stays until the claim goes.
func TestClaimSpecHoldsClass(t *testing.T) {
	s, c := start(t)
	createClass(t, s, "gold")
	waitClass(t, s, "gold", held)
	pvc := newClaim("data")
	pvc.Spec.VolumeAttributesClassName = ptr.To("gold")
	createClaim(t, s, pvc)
	waitInUse(t, c, "gold")
	deleteClass(t, s, "gold")
	stays(t, s, "gold", deleting)
	if err := s.Admin.CoreV1().PersistentVolumeClaims("default").Delete(s.Ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClass(t, s, "gold", "gone")
}

// A claim's status names a class too: the current one and the target of
// a modification in progress. Each holds its class until the status stops
// naming it, while the spec's class is another.
func TestClaimStatusHoldsClass(t *testing.T) {
	s, c := start(t)
	for _, name := range []string{"gold", "silver", "bronze"} {
		createClass(t, s, name)
		waitClass(t, s, name, held)
	}
	pvc := newClaim("data")
	pvc.Spec.VolumeAttributesClassName = ptr.To("gold")
	pvc = createClaim(t, s, pvc)
	pvc.Status.CurrentVolumeAttributesClassName = ptr.To("silver")
	pvc.Status.ModifyVolumeStatus = &corev1.ModifyVolumeStatus{TargetVolumeAttributesClassName: "bronze", Status: corev1.PersistentVolumeClaimModifyVolumeInProgress}
	pvc, err := s.Admin.CoreV1().PersistentVolumeClaims("default").UpdateStatus(s.Ctx, pvc, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitInUse(t, c, "silver", "bronze")
	deleteClass(t, s, "silver")
	deleteClass(t, s, "bronze")
	stays(t, s, "silver", deleting)
	stays(t, s, "bronze", deleting)

	// the modification is over: bronze is no longer named, silver still is
	pvc.Status.ModifyVolumeStatus = nil
	if pvc, err = s.Admin.CoreV1().PersistentVolumeClaims("default").UpdateStatus(s.Ctx, pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClass(t, s, "bronze", "gone")
	stays(t, s, "silver", deleting)

	pvc.Status.CurrentVolumeAttributesClassName = ptr.To("gold")
	if _, err = s.Admin.CoreV1().PersistentVolumeClaims("default").UpdateStatus(s.Ctx, pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClass(t, s, "silver", "gone")
	waitClass(t, s, "gold", held)
}

// A deleted class named by a volume stays until the volume stops naming
// it or goes.
func TestVolumeHoldsClass(t *testing.T) {
	s, c := start(t)
	createClass(t, s, "gold")
	waitClass(t, s, "gold", held)
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv1"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                  corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:               []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			VolumeAttributesClassName: ptr.To("gold"),
			PersistentVolumeSource:    corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: "h1"}}}}
	if _, err := s.Admin.CoreV1().PersistentVolumes().Create(s.Ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitInUse(t, c, "gold")
	deleteClass(t, s, "gold")
	stays(t, s, "gold", deleting)
	if err := s.Admin.CoreV1().PersistentVolumes().Delete(s.Ctx, "pv1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClass(t, s, "gold", "gone")
}

func TestClaimClasses(t *testing.T) {
	for _, tc := range []struct {
		name string
		pvc  corev1.PersistentVolumeClaim
		want []string
	}{
		{"none", corev1.PersistentVolumeClaim{}, nil},
		{"empty names", corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{VolumeAttributesClassName: ptr.To("")},
			Status: corev1.PersistentVolumeClaimStatus{CurrentVolumeAttributesClassName: ptr.To(""), ModifyVolumeStatus: &corev1.ModifyVolumeStatus{}}}, nil},
		{"all three, once each", corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{VolumeAttributesClassName: ptr.To("a")},
			Status: corev1.PersistentVolumeClaimStatus{CurrentVolumeAttributesClassName: ptr.To("b"),
				ModifyVolumeStatus: &corev1.ModifyVolumeStatus{TargetVolumeAttributesClassName: "a"}}}, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClaimClasses(&tc.pvc); !slices.Equal(got, tc.want) {
				t.Errorf("ClaimClasses() = %q, want %q", got, tc.want)
			}
		})
	}
}
