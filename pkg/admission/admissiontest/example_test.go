package admissiontest_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

// The builder fills what the server would from the object: name,
// namespace, kind, resource and the operation's options.
func ExampleCreate() {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}}
	a := admissiontest.Create(pod).User("alice", "dev").Attributes()
	fmt.Println(a.Operation, a.Namespace+"/"+a.Name, a.Kind, a.Resource, a.Options.GetObjectKind().GroupVersionKind().Kind, a.UserInfo.Username)
	// Output:
	// CREATE default/web /v1, Kind=Pod /v1, Resource=pods CreateOptions alice
}
