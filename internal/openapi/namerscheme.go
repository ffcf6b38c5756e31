package openapi

import (
	admissionv1 "k8s.io/api/admission/v1"
	admissionv1beta1 "k8s.io/api/admission/v1beta1"
	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationv1beta1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1beta1"
)

// namerScheme registers the group-versions kube-apiserver's definition
// namer knows (its legacy scheme, apiextensions-apiserver's and
// kube-aggregator's), which are more than admitd serves: the meta types
// every group-version registers (DeleteOptions, Status, WatchEvent) list
// them all in x-kubernetes-group-version-kind, admission.k8s.io and
// imagepolicy.k8s.io included, and not meta.k8s.io.
func namerScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, apiextensionsv1beta1.AddToScheme,
		apiregistrationv1.AddToScheme, apiregistrationv1beta1.AddToScheme,
		admissionv1.AddToScheme, admissionv1beta1.AddToScheme, imagepolicyv1alpha1.AddToScheme,
	} {
		utilruntime.Must(add(s))
	}
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}
