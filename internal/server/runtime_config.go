package server

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/admitd/admitd/internal/registry"
)

// needCoreResources refuses a --runtime-config that turns off the core
// resources admitd's own bootstrap and controllers use (namespaces,
// service accounts): kube-apiserver 1.37.2 panics on such a value
// (api/v1=false, or v1/<resource>=false, which its completion turns into
// the whole group off).
func needCoreResources(apis *registry.APIEnablement) error {
	for _, r := range []string{"namespaces", "serviceaccounts"} {
		if gvr := corev1.SchemeGroupVersion.WithResource(r); !apis.ResourceEnabled(gvr) {
			return fmt.Errorf("--runtime-config turns off %s of the core group v1, which admitd cannot run without", r)
		}
	}
	return nil
}
