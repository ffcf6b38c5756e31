package registry

import (
	"sync"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// Scheme returns the scheme that knows every built-in Go type admitd serves
// (k8s.io/api plus the apiextensions and apiregistration types). Its only
// conversions are those of the kinds served in several versions
// (HorizontalPodAutoscaler) or groups (Event); it has no defaulters: admitd
// defaults through Strategy. It is built on first use (a few milliseconds),
// not when the package is initialized, so commands that never decode an
// object (admitd version) do not pay for it.
var Scheme = sync.OnceValue(newScheme)

// Codecs returns the serializers (JSON, YAML, protobuf) over Scheme, built
// on first use.
var Codecs = sync.OnceValue(func() serializer.CodecFactory { return serializer.NewCodecFactory(Scheme()) })

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	// APIService's types only: its defaults are the strategy's.
	s.AddKnownTypes(apiregistrationv1.SchemeGroupVersion, &apiregistrationv1.APIService{}, &apiregistrationv1.APIServiceList{})
	metav1.AddToGroupVersion(s, apiregistrationv1.SchemeGroupVersion)
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	s.AddKnownTypes(metav1.SchemeGroupVersion, &metav1.DeleteOptions{}, &metav1.CreateOptions{},
		&metav1.UpdateOptions{}, &metav1.PatchOptions{}, &metav1.Status{})
	addHPAConversions(s)
	addEventConversions(s)
	addOptionalConversions(s)
	return s
}

// addHPAConversions registers the autoscaling/v1 <-> v2 conversions of
// autoscaling_conversion.go, so Convert and ConvertToVersion use them.
func addHPAConversions(s *runtime.Scheme) {
	utilruntime.Must(s.AddConversionFunc((*autoscalingv1.HorizontalPodAutoscaler)(nil), (*autoscalingv2.HorizontalPodAutoscaler)(nil),
		func(a, b any, _ conversion.Scope) error {
			return convertHPAv1ToV2(a.(*autoscalingv1.HorizontalPodAutoscaler), b.(*autoscalingv2.HorizontalPodAutoscaler))
		}))
	utilruntime.Must(s.AddConversionFunc((*autoscalingv2.HorizontalPodAutoscaler)(nil), (*autoscalingv1.HorizontalPodAutoscaler)(nil),
		func(a, b any, _ conversion.Scope) error {
			return convertHPAv2ToV1(a.(*autoscalingv2.HorizontalPodAutoscaler), b.(*autoscalingv1.HorizontalPodAutoscaler))
		}))
}
