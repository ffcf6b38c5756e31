package admissionsource_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/admitd/admitd/internal/admissionsource"
	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/policies"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// policyServer is an API server whose chain runs both policy plugins over
// PolicyConfigs and a ParamLookup, with the cache reloaded by a write
// observer, as internal/server wires them.
type policyServer struct {
	t *testing.T
	s *apiserver.Server
}

func newPolicyServer(t *testing.T) *policyServer {
	t.Helper()
	store, cat := memory.New(), registry.NewCatalogue()
	cfgs := admissionsource.NewPolicyConfigs(store, cat)
	types := admissionsource.NewCRDTypeConverters(store, cat)
	o := policies.Options{Source: cfgs, Params: admissionsource.NewParamLookup(store, cat), TypeConverters: types}
	pc := admission.PluginContext{Namespaces: admissionsource.NewNamespaceLookup(store, cat), Schema: admissionsource.NewSchema(cat)}
	m, err := policies.NewMutating(o, pc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := policies.NewValidating(o, pc)
	if err != nil {
		t.Fatal(err)
	}
	chain := admission.NewChain(
		admission.NamedPlugin{Name: policies.MutatingName, Plugin: m},
		admission.NamedPlugin{Name: policies.ValidatingName, Plugin: v},
	)
	reload := apiserver.Observer{HandlesFunc: cfgs.Handles, WrittenFunc: func(ctx context.Context, _ apiserver.WriteEvent) {
		if err := cfgs.Reload(ctx); err != nil {
			t.Error(err)
		}
	}}
	s := apiserver.New(apiserver.Config{Store: store, Catalogue: cat, Admission: chain, CustomTypeConverters: types,
		Observers: []apiserver.WriteObserver{apiserver.CustomResourceSync(store, cat, slog.Default()), reload}})
	ctx := context.Background()
	if err := s.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cfgs.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	return &policyServer{t: t, s: s}
}

func (p *policyServer) send(method, path, body string) *httptest.ResponseRecorder {
	p.t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if method == http.MethodPatch {
		r.Header.Set("Content-Type", "application/merge-patch+json")
	}
	w := httptest.NewRecorder()
	p.s.ServeHTTP(w, r)
	return w
}

func (p *policyServer) want(code int, method, path, body string) *httptest.ResponseRecorder {
	p.t.Helper()
	w := p.send(method, path, body)
	if w.Code != code {
		p.t.Fatalf("%s %s = %d %s, want %d", method, path, w.Code, w.Body.String(), code)
	}
	return w
}

const (
	paramsPath   = "/api/v1/namespaces/default/configmaps"
	policiesPath = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
	bindingsPath = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"
	mapPath      = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies"
	mapbPath     = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings"
)

const maxKeysPolicy = `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy",
 "metadata":{"name":"max-keys"},
 "spec":{"paramKind":{"apiVersion":"v1","kind":"ConfigMap"},
  "matchConstraints":{"resourceRules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps"]}],
   "objectSelector":{"matchLabels":{"checked":"yes"}}},
  "validations":[{"expression":"size(object.data) <= int(params.data.max)","messageExpression":"'at most ' + params.data.max + ' keys'"}]}}`

func binding(actions string) string {
	return `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding",
 "metadata":{"name":"max-keys"},
 "spec":{"policyName":"max-keys","validationActions":` + actions + `,
  "paramRef":{"name":"limits","parameterNotFoundAction":"Deny"}}}`
}

func configMap(name string, keys int) string {
	data := []string{}
	for i := range keys {
		data = append(data, `"k`+string(rune('a'+i))+`":"v"`)
	}
	return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","labels":{"checked":"yes"}},"data":{` + strings.Join(data, ",") + `}}`
}

// TestPoliciesTakeEffectBeforeTheWriteReturns writes a policy, its binding
// and its param through the server and checks that each write changes the
// very next request.
func TestPoliciesTakeEffectBeforeTheWriteReturns(t *testing.T) {
	p := newPolicyServer(t)
	p.want(http.StatusCreated, "POST", paramsPath, `{"metadata":{"name":"limits"},"data":{"max":"1"}}`)
	p.want(http.StatusCreated, "POST", policiesPath, maxKeysPolicy)
	p.want(http.StatusCreated, "POST", paramsPath, configMap("before-binding", 3))

	p.want(http.StatusCreated, "POST", bindingsPath, binding(`["Deny"]`))
	w := p.want(http.StatusUnprocessableEntity, "POST", paramsPath, configMap("too-many", 3))
	if want := `configmaps \"too-many\" is forbidden: ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys' denied request: at most 1 keys`; !strings.Contains(w.Body.String(), want) {
		t.Errorf("denial = %s, want it to contain %s", w.Body.String(), want)
	}

	p.want(http.StatusOK, "PATCH", paramsPath+"/limits", `{"data":{"max":"5"}}`)
	p.want(http.StatusCreated, "POST", paramsPath, configMap("now-fine", 3))

	p.want(http.StatusOK, "PATCH", paramsPath+"/limits", `{"data":{"max":"1"}}`)
	p.want(http.StatusOK, "PATCH", bindingsPath+"/max-keys", `{"spec":{"validationActions":["Warn","Audit"]}}`)
	w = p.want(http.StatusCreated, "POST", paramsPath, configMap("warned", 3))
	if got := w.Header().Get("Warning"); !strings.Contains(got, "Validation failed for ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys': at most 1 keys") {
		t.Errorf("Warning header = %q", got)
	}

	p.want(http.StatusOK, "DELETE", paramsPath+"/limits", "")
	w = p.want(http.StatusUnprocessableEntity, "POST", paramsPath, configMap("no-param", 1))
	if !strings.Contains(w.Body.String(), "no params found for policy binding with `Deny` parameterNotFoundAction") {
		t.Errorf("missing param: %s", w.Body.String())
	}
	p.want(http.StatusOK, "DELETE", bindingsPath+"/max-keys", "")
	p.want(http.StatusCreated, "POST", paramsPath, configMap("unbound", 3))
}

// TestMutatingPolicyThroughServer checks a mutation reaches storage.
func TestMutatingPolicyThroughServer(t *testing.T) {
	p := newPolicyServer(t)
	p.want(http.StatusCreated, "POST", mapPath, `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingAdmissionPolicy",
 "metadata":{"name":"team"},
 "spec":{"matchConstraints":{"resourceRules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps"]}]},
  "reinvocationPolicy":"Never",
  "mutations":[{"patchType":"ApplyConfiguration","applyConfiguration":{"expression":"Object{metadata: Object.metadata{labels: {'team': 'a'}}}"}}]}}`)
	p.want(http.StatusCreated, "POST", mapbPath, `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingAdmissionPolicyBinding",
 "metadata":{"name":"team"},"spec":{"policyName":"team"}}`)
	p.want(http.StatusCreated, "POST", paramsPath, configMap("cm", 1))
	w := p.want(http.StatusOK, "GET", paramsPath+"/cm", "")
	if !strings.Contains(w.Body.String(), `"team":"a"`) {
		t.Errorf("stored object = %s, want label team=a", w.Body.String())
	}
}
