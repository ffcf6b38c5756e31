package imagepolicywebhook

import (
	"context"
	"fmt"
	"sync"
	"time"

	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// requestTimeout bounds each call to the backend; a kubeconfig cannot set
// one.
const requestTimeout = 30 * time.Second

// reviewCodec writes ImageReviews as imagepolicy.k8s.io/v1alpha1 JSON and
// reads the backend's answers (JSON, YAML or protobuf). It knows every
// built-in kind, as kube-apiserver's codec does, so that an answer of
// another kind is refused in the same words ("converting ... unknown
// conversion"). It is built when the first plugin is.
var reviewCodec = sync.OnceValue(func() runtime.Codec {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := imagepolicyv1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	return serializer.NewCodecFactory(s).LegacyCodec(imagepolicyv1alpha1.SchemeGroupVersion)
})

// backend posts ImageReviews to the server a kubeconfig names.
type backend struct {
	client  *rest.RESTClient
	backoff wait.Backoff
}

// newBackend builds the client of the kubeconfig file's current context,
// with kube-apiserver's settings for webhooks: a 30s timeout and no
// client-side rate limit.
func newBackend(kubeconfig string, retryBackoff time.Duration) (*backend, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.Timeout = requestTimeout
	cfg.QPS = -1
	cfg.ContentType = runtime.ContentTypeJSON
	cfg.NegotiatedSerializer = serializer.NegotiatedSerializerWrapper(runtime.SerializerInfo{Serializer: reviewCodec()})
	client, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &backend{
		client:  client,
		backoff: wait.Backoff{Duration: retryBackoff, Factor: 1.5, Jitter: 0.2, Steps: 5},
	}, nil
}

// review posts r and reads the answer into it. A transient failure (reset
// connection, 429, 500, 504 or any answer with Retry-After) is tried again,
// up to five attempts in all; the last attempt decides. When ctx ends
// before any attempt, there is no answer: as upstream, that is an error
// with status code 0.
func (b *backend) review(ctx context.Context, r *imagepolicyv1alpha1.ImageReview) error {
	var result rest.Result
	_ = wait.ExponentialBackoffWithContext(ctx, b.backoff, func(context.Context) (bool, error) {
		result = b.client.Post().Body(r).Do(ctx)
		err := result.Error()
		if transient(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err := result.Error(); err != nil {
		return err
	}
	var code int
	if result.StatusCode(&code); code < 200 || code >= 300 {
		return fmt.Errorf("Error contacting webhook: %d", code)
	}
	return result.Into(r)
}

// transient reports whether a failed call is worth another attempt.
func transient(err error) bool {
	if err == nil {
		return false
	}
	if utilnet.IsConnectionReset(err) || utilnet.IsHTTP2ConnectionLost(err) ||
		apierrors.IsInternalError(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) {
		return true
	}
	_, retry := apierrors.SuggestsClientDelay(err)
	return retry
}
