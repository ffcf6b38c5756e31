package requestmetrics

import (
	"crypto/x509"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
	apiextensionsconversion "k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	_ "k8s.io/apiserver/pkg/admission/metrics" // registers its series on init
	manifestmetrics "k8s.io/apiserver/pkg/admission/plugin/manifest/metrics"
	_ "k8s.io/apiserver/pkg/admission/plugin/policy/mutating/metrics"
	_ "k8s.io/apiserver/pkg/admission/plugin/policy/validating/metrics"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	authorizationcel "k8s.io/apiserver/pkg/authorization/cel"
	authorizationmetrics "k8s.io/apiserver/pkg/authorization/metrics"
	endpointsfilters "k8s.io/apiserver/pkg/endpoints/filters"
	handlermetrics "k8s.io/apiserver/pkg/endpoints/handlers/metrics"
	endpointsmetrics "k8s.io/apiserver/pkg/endpoints/metrics"
	authorizationconfigmetrics "k8s.io/apiserver/pkg/server/options/authorizationconfig/metrics"
	cachermetrics "k8s.io/apiserver/pkg/storage/cacher/metrics"
	etcd3metrics "k8s.io/apiserver/pkg/storage/etcd3/metrics"
	storagemetrics "k8s.io/apiserver/pkg/storage/metrics"
	flowcontrolmetrics "k8s.io/apiserver/pkg/util/flowcontrol/metrics"
	webhookauthzmetrics "k8s.io/apiserver/plugin/pkg/authorizer/webhook/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	_ "k8s.io/component-base/metrics/prometheus/feature" // registers kubernetes_feature_enabled on init
	_ "k8s.io/component-base/metrics/prometheus/version" // registers kubernetes_build_info on init
	ephemeralmetrics "k8s.io/kubernetes/pkg/controller/volume/ephemeral/metrics"
	nodeauthorizer "k8s.io/kubernetes/plugin/pkg/auth/authorizer/node"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/auth/authzwebhook"
	"github.com/admitd/admitd/internal/auth/node"
	"github.com/admitd/admitd/internal/controllers/ephemeral"
	"github.com/admitd/admitd/internal/conversion"
	"github.com/admitd/admitd/internal/flowcontrol"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/policies"
	"github.com/admitd/admitd/pkg/features"
)

// family is a metric family as its descriptor states it.
type family struct {
	help   string
	labels []string // sorted
}

var descPattern = regexp.MustCompile(`^Desc\{fqName: ("(?:[^"\\]|\\.)*"), help: ("(?:[^"\\]|\\.)*"), unit: "[^"]*", constLabels: \{[^}]*\}, variableLabels: \{([^}]*)\}\}$`)

// registered are the families of every collector registered with reg, by
// name, read from their descriptors: unlike a scrape, they include vectors
// without a series yet. The registry keeps its collectors unexported.
func registered(t *testing.T, reg *prometheus.Registry) map[string]family {
	t.Helper()
	field := reflect.ValueOf(reg).Elem().FieldByName("collectorsByID")
	collectors := reflect.NewAt(field.Type(), unsafe.Pointer(field.UnsafeAddr())).Elem().Interface().(map[uint64]prometheus.Collector)
	out := map[string]family{}
	for _, c := range collectors {
		ch := make(chan *prometheus.Desc, 64)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			m := descPattern.FindStringSubmatch(d.String())
			if m == nil {
				t.Fatalf("unparsed descriptor %s", d)
			}
			name, _ := strconv.Unquote(m[1])
			help, _ := strconv.Unquote(m[2])
			var labels []string
			if m[3] != "" {
				labels = strings.Split(m[3], ",")
			}
			slices.Sort(labels)
			out[name] = family{help: help, labels: labels}
		}
	}
	return out
}

// ourRegistry has every family admitd serve registers under an upstream
// name, but Pod Security's (upstream's own recorder).
func ourRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	apiserver.NewRequestMetrics(reg)
	apiserver.TerminatedWatchers(reg)
	admission.NewMetrics(reg)
	policies.NewMetrics(reg)
	conversion.NewMetrics(reg)
	auth.NewDecisionMetrics(reg)
	auth.NewAuthenticationMetrics(reg)
	apiserver.RegisterBuildInfo(reg)
	features.New().RegisterMetrics(reg)
	authzwebhook.NewMetrics(reg)
	node.NewMetrics(reg)
	flowcontrol.New(flowcontrol.Options{ServerConcurrencyLimit: 600}).Register(reg)
	if err := ephemeral.NewMetrics().Register(reg); err != nil {
		panic(err)
	}
	return reg
}

func upstreamRegistry() *prometheus.Registry {
	flowcontrolmetrics.Register()
	endpointsmetrics.Register()
	handlermetrics.Register()
	endpointsfilters.RegisterMetrics()
	cachermetrics.Register()
	authorizationmetrics.RegisterMetrics()
	authorizationcel.RegisterMetrics()
	webhookauthzmetrics.RegisterWebhookMetrics()
	authorizationconfigmetrics.RegisterMetrics()
	manifestmetrics.RegisterMetrics()
	nodeauthorizer.RegisterMetrics()
	_ = apiextensionsconversion.Metrics
	storagemetrics.Register()
	etcd3metrics.Register()
	ephemeralmetrics.RegisterMetrics()
	_ = x509request.New(x509.VerifyOptions{}, x509request.CommonNameUserConversion) // registers its expiration histogram
	return legacyregistry.Registerer().(*prometheus.Registry)
}

// Every family admitd registers under a name kube-apiserver's libraries
// register too has their help text, with the stability prefix
// component-base adds ("[ALPHA] ", "[BETA] ", "[STABLE] "), and label
// names; the families upstream does not have are admitd's own.
func TestHelpTextsAsUpstream(t *testing.T) {
	upstream, ours := registered(t, upstreamRegistry()), registered(t, ourRegistry())
	var compared, ownNames []string
	for name, o := range ours {
		u, ok := upstream[name]
		if !ok {
			ownNames = append(ownNames, name)
			continue
		}
		compared = append(compared, name)
		if o.help != u.help {
			t.Errorf("%s: help\n  %q\nwant\n  %q", name, o.help, u.help)
		}
		if !slices.Equal(o.labels, u.labels) {
			t.Errorf("%s: labels %v, want %v", name, o.labels, u.labels)
		}
	}
	slices.Sort(ownNames)
	t.Logf("compared %d families", len(compared))
	// Upstream registers the per-CRD conversion series only when it builds
	// a CRD's converter (an unexported factory), so it is not compared.
	if want := []string{"apiserver_crd_conversion_webhook_duration_seconds"}; !slices.Equal(ownNames, want) {
		t.Errorf("families upstream has not registered: %v, want %v (admitd's own names, or an upstream package to register here)", ownNames, want)
	}
	if len(compared) < 50 {
		t.Errorf("compared only %d families: is an upstream package not registered?", len(compared))
	}
}
