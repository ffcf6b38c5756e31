package apiserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/memory"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/policies"
)

// policyServer is an API server whose chain runs both policy plugins over
// PolicyConfigs and a ParamLookup, as internal/server wires them.
type policyServer struct {
	t *testing.T
	s *Server
}

func newPolicyServer(t *testing.T) *policyServer {
	t.Helper()
	store, cat := memory.New(), registry.NewCatalogue()
	cfgs := NewPolicyConfigs(store, cat, nil)
	o := policies.Options{Source: cfgs, Params: NewParamLookup(store, cat), TypeConverters: NewCRDTypeConverters(store, cat)}
	pc := admission.PluginContext{Namespaces: NewNamespaceLookup(store, cat), Schema: NewSchema(cat)}
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
	s := New(Config{Store: store, Catalogue: cat, Admission: chain, PolicyConfigs: cfgs})
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

const gadgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gadgets.example.com"},
 "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"gadgets","singular":"gadget","kind":"Gadget","listKind":"GadgetList"},
  "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{
   "spec":{"type":"object","properties":{"size":{"type":"integer"}}}}}}}]}}`

// TestPolicyStatusTypeChecking checks status.typeChecking is written for a
// policy on a custom resource, and observedGeneration for every policy.
func TestPolicyStatusTypeChecking(t *testing.T) {
	p := newPolicyServer(t)
	p.want(http.StatusCreated, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", gadgetCRD)
	p.want(http.StatusCreated, "POST", policiesPath, `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy",
 "metadata":{"name":"gadgets"},
 "spec":{"matchConstraints":{"resourceRules":[{"operations":["CREATE"],"apiGroups":["example.com"],"apiVersions":["v1"],"resources":["gadgets"]}]},
  "validations":[{"expression":"object.spec.size == 'big'"},{"expression":"object.spec.size < 10"}]}}`)
	p.want(http.StatusCreated, "POST", policiesPath, maxKeysPolicy)
	status := NewPolicyStatus(p.s.store, p.s.cat)
	if err := status.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	w := p.want(http.StatusOK, "GET", policiesPath+"/gadgets", "")
	body := w.Body.String()
	for _, want := range []string{`"observedGeneration":1`, `"fieldRef":"spec.validations[0].expression"`,
		`example.com/v1, Kind=Gadget: ERROR: \u003cinput\u003e:1:18: found no matching overload for '_==_' applied to '(int, string)'`} {
		if !strings.Contains(body, want) {
			t.Errorf("status of gadgets = %s, want it to contain %s", body, want)
		}
	}
	if strings.Contains(body, "validations[1]") {
		t.Errorf("status of gadgets = %s, want no warning for validation 1", body)
	}
	w = p.want(http.StatusOK, "GET", policiesPath+"/max-keys", "")
	if body := w.Body.String(); !strings.Contains(body, `"status":{"observedGeneration":1,"typeChecking":{}}`) {
		t.Errorf("status of max-keys = %s, want observedGeneration 1 and no warnings", body)
	}
}

// TestPolicyStatusTypeCheckingBuiltin checks built-in kinds are type
// checked against their OpenAPI schemas.
func TestPolicyStatusTypeCheckingBuiltin(t *testing.T) {
	p := newPolicyServer(t)
	for name, expr := range map[string]string{"bad": "object.spec.replicas > 'x'", "good": "object.spec.replicas > 1"} {
		p.want(http.StatusCreated, "POST", policiesPath, `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy",
 "metadata":{"name":"`+name+`"},
 "spec":{"matchConstraints":{"resourceRules":[{"operations":["CREATE"],"apiGroups":["apps"],"apiVersions":["v1"],"resources":["deployments"]}]},
  "validations":[{"expression":"`+expr+`"}]}}`)
	}
	if err := NewPolicyStatus(p.s.store, p.s.cat).Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	body := p.want(http.StatusOK, "GET", policiesPath+"/bad", "").Body.String()
	want := `{"fieldRef":"spec.validations[0].expression","warning":"apps/v1, Kind=Deployment: ERROR: \u003cinput\u003e:1:22: found no matching overload for '_\u003e_' applied to '(int, string)'\n | object.spec.replicas \u003e 'x'\n | .....................^\n"}`
	if !strings.Contains(body, want) {
		t.Errorf("status of bad = %s, want it to contain %s", body, want)
	}
	body = p.want(http.StatusOK, "GET", policiesPath+"/good", "").Body.String()
	if !strings.Contains(body, `"status":{"observedGeneration":1,"typeChecking":{}}`) {
		t.Errorf("status of good = %s, want observedGeneration 1 and no warnings", body)
	}
}
