package serviceaccount

import (
	"regexp"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

func TestRandomVolumeNameAlphabet(t *testing.T) {
	re := regexp.MustCompile(`^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$`)
	seen := map[string]bool{}
	for range 50 {
		n := randomVolumeName()
		if !re.MatchString(n) {
			t.Fatalf("randomVolumeName() = %q", n)
		}
		seen[n] = true
	}
	if len(seen) < 45 {
		t.Errorf("50 names, only %d distinct", len(seen))
	}
}

// TestRandomVolumeNameSpreads: every character of the alphabet appears at
// every position about as often as the others, and positions vary
// independently (5,400 names: each count is 200 expected, >100 is ~7
// standard deviations below; two equal neighbours 1 in 27).
func TestRandomVolumeNameSpreads(t *testing.T) {
	const names = 27 * 200
	var counts [5][256]int
	sameNeighbours := 0
	for range names {
		suffix := randomVolumeName()[len(VolumeNamePrefix):]
		for i := range 5 {
			counts[i][suffix[i]]++
			if i > 0 && suffix[i] == suffix[i-1] {
				sameNeighbours++
			}
		}
	}
	for i := range 5 {
		for _, c := range []byte(nameAlphabet) {
			if n := counts[i][c]; n < 100 || n > 300 {
				t.Errorf("%q at position %d: %d times in %d names, want about 200", c, i, n, names)
			}
		}
	}
	if want := 4 * names / 27; sameNeighbours > 2*want {
		t.Errorf("%d equal neighbouring characters, want about %d", sameNeighbours, want)
	}
}

// TestSharedMountsDoNotAlias: containers whose mount lists share one
// backing array keep their own when a later step appends to one.
func TestSharedMountsDoNotAlias(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "i"}},
		Containers:     []corev1.Container{{Name: "a"}, {Name: "b", VolumeMounts: []corev1.VolumeMount{{Name: "x", MountPath: "/x"}}}, {Name: "c"}},
	}}
	mountToken(pod, func() string { return "kube-api-access-abcde" })
	want := corev1.VolumeMount{Name: "kube-api-access-abcde", ReadOnly: true, MountPath: TokenMountPath}
	pod.Spec.InitContainers[0].VolumeMounts = append(pod.Spec.InitContainers[0].VolumeMounts, corev1.VolumeMount{Name: "late"})
	if got := pod.Spec.Containers[0].VolumeMounts; len(got) != 1 || !equality.Semantic.DeepEqual(got[0], want) {
		t.Errorf("container a mounts %+v, want only the token", got)
	}
	if got := pod.Spec.Containers[2].VolumeMounts; len(got) != 1 || !equality.Semantic.DeepEqual(got[0], want) {
		t.Errorf("container c mounts %+v, want only the token", got)
	}
	if got := pod.Spec.Containers[1].VolumeMounts; len(got) != 2 || !equality.Semantic.DeepEqual(got[1], want) {
		t.Errorf("container b mounts %+v, want /x then the token", got)
	}
	if len(pod.Spec.Volumes) != 1 || pod.Spec.Volumes[0].Name != "kube-api-access-abcde" ||
		!equality.Semantic.DeepEqual(pod.Spec.Volumes[0].Projected, TokenVolumeSource()) {
		t.Errorf("volumes = %+v", pod.Spec.Volumes)
	}
}
