package registry

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// Scheme knows every built-in Go type admitd serves (k8s.io/api plus the
// apiextensions types). It has no conversions or defaulters: admitd serves
// one version per built-in resource and defaults through Strategy.
var Scheme = runtime.NewScheme()

// Codecs are the serializers (JSON, YAML, protobuf) over Scheme.
var Codecs serializer.CodecFactory

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(Scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(Scheme))
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
	Scheme.AddKnownTypes(metav1.SchemeGroupVersion, &metav1.DeleteOptions{}, &metav1.CreateOptions{},
		&metav1.UpdateOptions{}, &metav1.PatchOptions{}, &metav1.Status{})
	Codecs = serializer.NewCodecFactory(Scheme)
}
