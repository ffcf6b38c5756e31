package cel_test

import (
	"context"
	"errors"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/admitd/admitd/pkg/admission"
)

// This file holds the inputs shared by the golden and the differential
// tests: requests, and sets of matchConditions evaluated against them.

var (
	podsGVR   = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	podGVK    = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	widgetGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	widgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
)

// request is one admission request plus what the webhook matched it as.
type request struct {
	attrs *admission.Attributes
	// kind is the invocation kind (request.kind); the request's own kind
	// when zero.
	kind schema.GroupVersionKind
	// object and oldObject are what the conditions see.
	object, oldObject runtime.Object
}

func (r request) invocationKind() schema.GroupVersionKind {
	if r.kind.Empty() {
		return r.attrs.Kind
	}
	return r.kind
}

func alice() authenticationv1.UserInfo {
	return authenticationv1.UserInfo{Username: "alice", UID: "alice-uid", Groups: []string{"devs", "system:authenticated"},
		Extra: map[string]authenticationv1.ExtraValue{"scopes": {"a", "b"}}}
}

func pod() *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "my-pod", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Image: "nginx",
			Ports:     []corev1.ContainerPort{{ContainerPort: 80}},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
				HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("http")}}},
		}}},
	}
}

func secret() *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"},
		Data:       map[string][]byte{"k": []byte("hi")},
	}
}

func widget(size int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "namespace": "default"},
		"spec":     map[string]any{"size": size, "tags": []any{"x", "y"}},
	}}
}

func createOptions() *metav1.CreateOptions {
	return &metav1.CreateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "CreateOptions"}, FieldManager: "kubectl"}
}

// requests are the named requests the cases run against.
var requests = map[string]func() request{
	"create-pod": func() request {
		p := pod()
		return request{attrs: &admission.Attributes{Name: "my-pod", Namespace: "default", Resource: podsGVR, Kind: podGVK,
			Operation: admission.Create, Options: createOptions(), Object: p, UserInfo: alice(), Record: admission.NewRecord()}, object: p}
	},
	"update-pod-status-dryrun": func() request {
		p, old := pod(), pod()
		old.Labels = map[string]string{"app": "old"}
		return request{attrs: &admission.Attributes{Name: "my-pod", Namespace: "default", Resource: podsGVR, Subresource: "status",
			Kind: podGVK, Operation: admission.Update, DryRun: true, Object: p, OldObject: old, UserInfo: alice(),
			Record: admission.NewRecord()}, object: p, oldObject: old}
	},
	"delete-secret": func() request {
		s := secret()
		return request{attrs: &admission.Attributes{Name: "s", Namespace: "default",
			Resource: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, Kind: schema.GroupVersionKind{Version: "v1", Kind: "Secret"},
			Operation: admission.Delete, OldObject: s, UserInfo: authenticationv1.UserInfo{Username: "bob"}, Record: admission.NewRecord()}, oldObject: s}
	},
	"create-widget-generatename-equivalent": func() request {
		w := widget(3)
		return request{attrs: &admission.Attributes{Namespace: "default", Resource: widgetGVR, Kind: widgetGVK, Operation: admission.Create,
			Object: w, UserInfo: alice(), Record: admission.NewRecord()},
			kind: schema.GroupVersionKind{Group: "example.com", Version: "v1beta1", Kind: "Widget"}, object: w}
	},
}

// conditionCase is a set of matchConditions evaluated against one request
// under each failure policy.
type conditionCase struct {
	name       string
	request    string
	conditions []string // "name=expression" or a bare expression (named c<i>)
	authorizer bool
}

func (c conditionCase) matchConditions() []admissionregistrationv1.MatchCondition {
	out := make([]admissionregistrationv1.MatchCondition, len(c.conditions))
	for i, s := range c.conditions {
		name, expr, ok := strings.Cut(s, "=")
		if !ok || strings.ContainsAny(name, " .('") {
			name, expr = "c"+strconv.Itoa(i), s
		}
		out[i] = admissionregistrationv1.MatchCondition{Name: name, Expression: expr}
	}
	return out
}

var (
	nest5     = nest(5, 10)
	nest6     = nest(6, 10)
	twoChecks = "authorizer.path('/a').check('get').allowed() && authorizer.path('/b').check('get').allowed()"
)

// nest is n nested all() comprehensions over a list of size elements.
func nest(n, size int) string {
	list := "[" + strings.TrimSuffix(strings.Repeat("0,", size), ",") + "]"
	expr := "true"
	for i := range n {
		expr = list + ".all(x" + string(rune('a'+i)) + ", " + expr + ")"
	}
	return expr
}

var conditionCases = []conditionCase{
	// The cases of upstream's matchConditions matcher_test.go, with real
	// expressions: an error is a missing key.
	{name: "single-true", request: "create-pod", conditions: []string{"true"}},
	{name: "two-true", request: "create-pod", conditions: []string{"true", "1 == 1"}},
	{name: "single-false", request: "create-pod", conditions: []string{"test1=false"}},
	{name: "two-false", request: "create-pod", conditions: []string{"test1=false", "test2=false"}},
	{name: "false-true", request: "create-pod", conditions: []string{"test1=false", "true"}},
	{name: "true-false-true", request: "create-pod", conditions: []string{"true", "test1=false", "true"}},
	{name: "false-beats-errors", request: "create-pod", conditions: []string{"true", "object.nosuch == 1", "test1=false", "true", "object.other == 2"}},
	{name: "errors-and-true", request: "create-pod", conditions: []string{"true", "object.nosuch == 1", "true", "object.other == 2"}},
	{name: "duplicate-errors", request: "create-pod", conditions: []string{"object.nosuch == 1", "object.nosuch == 1"}},
	{name: "spec-96-two-errors", request: "create-pod", conditions: []string{"object.spec.nodeName == 'x'", "object.nosuch == 1"}},
	{name: "spec-97-params-undeclared", request: "create-pod", conditions: []string{"params.x == 1"}},
	{name: "not-bool", request: "create-pod", conditions: []string{"'a'"}},
	{name: "dyn-not-bool", request: "create-pod", conditions: []string{"object.metadata.name"}},
	{name: "syntax-error", request: "create-pod", conditions: []string{"object.metadata.name ==", "true"}},
	{name: "per-call-limit", request: "create-pod", conditions: []string{nest6}},
	{name: "within-per-call-limit", request: "create-pod", conditions: []string{nest5}},
	// check() costs 350,000: two of them per condition exhaust the shared
	// 2,500,000 at the fourth condition.
	{name: "budget-fitting", request: "create-pod", authorizer: true, conditions: []string{twoChecks, twoChecks, twoChecks}},
	{name: "budget-exhausted", request: "create-pod", authorizer: true, conditions: []string{twoChecks, twoChecks, twoChecks, twoChecks}},
	{name: "budget-beats-false", request: "create-pod", authorizer: true, conditions: []string{"test1=false", twoChecks, twoChecks, twoChecks, twoChecks}},
	// The request variable.
	{name: "request-fields", request: "create-pod", conditions: []string{
		"request.kind.kind == 'Pod' && request.kind.group == '' && request.resource.resource == 'pods'",
		"request.requestKind.version == 'v1' && request.requestResource.resource == 'pods'",
		"request.operation == 'CREATE' && request.name == 'my-pod' && request.namespace == 'default'",
		"request.userInfo.username == 'alice' && request.userInfo.uid == 'alice-uid' && 'devs' in request.userInfo.groups",
		"request.userInfo.extra['scopes'] == ['a', 'b']",
		"request.dryRun == false && request.options.fieldManager == 'kubectl' && request.options.kind == 'CreateOptions'",
		"!has(request.subResource) && !has(request.requestSubResource)",
	}},
	{name: "request-uid-undeclared", request: "create-pod", conditions: []string{"request.uid == ''"}},
	{name: "request-subresource", request: "update-pod-status-dryrun", conditions: []string{
		"request.subResource == 'status' && request.requestSubResource == 'status' && request.dryRun",
		"request.operation == 'UPDATE' && oldObject.metadata.labels.app == 'old' && object.metadata.labels.app == 'web'",
		"request.options == null",
	}},
	{name: "request-equivalent-kind-quirk", request: "create-widget-generatename-equivalent", conditions: []string{
		"request.kind.version == 'v1beta1' && request.resource.version == 'v1' && request.requestKind.version == 'v1'",
	}},
	{name: "request-name-absent", request: "create-widget-generatename-equivalent", conditions: []string{"request.name == ''"}},
	{name: "request-name-optional", request: "create-widget-generatename-equivalent", conditions: []string{"request.?name.orValue('') == ''"}},
	{name: "request-user-absent-fields", request: "delete-secret", conditions: []string{"request.userInfo.uid == ''", "request.userInfo.groups == []"}},
	// Objects, null handling and the JSON view.
	{name: "object-null-on-delete", request: "delete-secret", conditions: []string{"object == null", "oldObject != null && oldObject.data.k == 'aGk='"}},
	{name: "field-of-null", request: "delete-secret", conditions: []string{"object.metadata.name == 's'"}},
	{name: "oldobject-null-on-create", request: "create-pod", conditions: []string{"oldObject == null", "oldObject.metadata.name == 'x'"}},
	{name: "typed-json-view", request: "create-pod", conditions: []string{
		"object.apiVersion == 'v1' && object.kind == 'Pod'",
		"!has(object.metadata.creationTimestamp) && !has(object.metadata.uid)",
		"object.spec.containers[0].resources.limits.cpu == '500m'",
		"object.spec.containers[0].readinessProbe.httpGet.port == 'http'",
		"object.spec.containers[0].ports[0].containerPort == 80",
		"object.spec.containers.all(c, c.image.startsWith('nginx'))",
		"object.metadata.namespace == 'default'",
	}},
	{name: "typed-missing-key", request: "create-pod", conditions: []string{"object.metadata.labels['missing-key'] == 'x'"}},
	{name: "unstructured-view", request: "create-widget-generatename-equivalent", conditions: []string{
		"object.spec.size == 3 && object.spec.tags == ['x', 'y']", "object.spec.size > 2.5",
	}},
	{name: "namespace-object-null", request: "create-pod", conditions: []string{"namespaceObject == null", "namespaceObject.metadata.name == 'x'"}},
	// Libraries of the stored environment, and their errors.
	{name: "libraries", request: "create-pod", conditions: []string{
		"quantity(object.spec.containers[0].resources.limits.cpu).isLessThan(quantity('1'))",
		"sign(quantity('-5')) == -1", "quantity('1') == quantity('1000m')",
		"ip('10.0.0.1').family() == 4 && cidr('10.0.0.0/8').containsIP('10.1.2.3')",
		"url('https://example.com/p?k=v').getHost() == 'example.com'",
		"'a1b2'.findAll('[0-9]') == ['1', '2']", "'abc'.matches('^a')",
		"!format.dns1123Label().validate('Bad_Name').hasValue() == false",
		"semver('v1.0', true).major() == 1", "sets.contains([1, 2, 3], [2])",
		"'%s-%d'.format(['a', 1]) == 'a-1'", "'a,b'.split(',').size() == 2",
		"[1, 2, 3].includes(2)", "[3, 1, 2].sort() == [1, 2, 3]", "lists.range(3) == [0, 1, 2]",
		"{'a': 1}.transformMap(k, v, v + 1) == {'a': 2}", "[1, 2].all(i, v, v > i)",
		"{'a': 1}.?b.orValue(2) == 2", "1 < 2.0", "[1, 2, 2, 3].lastIndexOf(2) == 2",
	}},
	{name: "runtime-errors", request: "create-pod", conditions: []string{
		"1 / 0 == 1", "9223372036854775807 + 1 > 0", "{'a': 1}['b'] == 1", "quantity('200K').isInteger()",
		"[].min() == 1", "url('../relative').getHost() == ''", "ip('::ffff:1.2.3.4').family() == 6",
	}},
	{name: "compile-errors", request: "create-pod", conditions: []string{
		"'hello'.reverse() == 'olleh'", "math.greatest(1, 2) == 2", "[1, 'a'].size() == 2",
		"duration('1x') > duration('1s')", "quantity('-5').sign() == -1", "jsonpatch.escapeKey('a') == 'a'",
		"'x'.find('[') == ''",
	}},
	// The authorizer, unbound then bound to a fake authorizer.
	{name: "authorizer-unbound", request: "create-pod", conditions: []string{"authorizer.group('').resource('pods').check('get').allowed()"}},
	{name: "request-resource-unbound", request: "create-pod", conditions: []string{"authorizer.requestResource.check('create').allowed()"}},
	// Each check costs 350,000, so at most seven checks per case.
	{name: "authorizer-allow-deny", request: "create-pod", authorizer: true, conditions: []string{
		"authorizer.group('').resource('pods').namespace('default').check('get').allowed()",
		"!authorizer.group('').resource('secrets').check('get').allowed() && authorizer.group('').resource('secrets').check('get').reason() == 'secrets are private'",
		"authorizer.requestResource.check('create').allowed()",
	}},
	{name: "authorizer-error-path", request: "create-pod", authorizer: true, conditions: []string{
		"authorizer.group('').resource('boom').check('get').errored() && authorizer.group('').resource('boom').check('get').error() == 'authorizer broke'",
		"authorizer.requestResource.subresource('log').check('get').reason() == 'pods/log my-pod in default as alice'",
		"authorizer.path('/healthz').check('get').allowed()",
	}},
	{name: "authorizer-serviceaccount-selectors", request: "create-pod", authorizer: true, conditions: []string{
		"authorizer.serviceAccount('kube-system', 'sa').group('').resource('pods').check('list').reason() == 'system:serviceaccount:kube-system:sa'",
		"authorizer.group('').resource('pods').fieldSelector('spec.nodeName=n1').labelSelector('a in (b').check('watch').reason() == 'fields=1 labels-err'",
	}},
	{name: "authorizer-errors", request: "create-pod", authorizer: true, conditions: []string{
		"authorizer.path('').check('get').allowed()", "authorizer.group('').resource('').check('get').allowed()",
		"authorizer.serviceAccount('Bad NS', 'sa').path('/').check('get').allowed()",
	}},
	{name: "authorizer-cost", request: "create-pod", authorizer: true, conditions: []string{
		"authorizer.path('/a').check('get').allowed() && authorizer.path('/b').check('get').allowed() && authorizer.path('/c').check('get').allowed()",
	}},
	{name: "request-resource-subresource", request: "update-pod-status-dryrun", authorizer: true, conditions: []string{
		"authorizer.requestResource.check('update').reason() == 'pods/status my-pod in default as alice'",
	}},
}

// authorizeFake is the decision of the fake authorizer both sides use.
func authorizeFake(user, verb, group, res, sub, ns, name, path string, fieldReqs int, fieldErr, labelErr error) (admission.AuthorizationDecision, string, error) {
	switch {
	case path != "":
		return admission.AuthorizationAllow, "path " + path, nil
	case res == "secrets":
		return admission.AuthorizationDeny, "secrets are private", nil
	case res == "boom":
		return admission.AuthorizationNoOpinion, "", errors.New("authorizer broke")
	case strings.HasPrefix(user, "system:serviceaccount:"):
		return admission.AuthorizationNoOpinion, user, nil
	case verb == "watch":
		reason := "fields=" + strconv.Itoa(fieldReqs)
		if fieldErr != nil {
			reason += " fields-err"
		}
		if labelErr != nil {
			reason += " labels-err"
		}
		return admission.AuthorizationNoOpinion, reason, nil
	case sub != "":
		return admission.AuthorizationAllow, res + "/" + sub + " " + name + " in " + ns + " as " + user, nil
	}
	return admission.AuthorizationAllow, "", nil
}

// fakeAuthorizer is authorizeFake as an admission.Authorizer.
var fakeAuthorizer = admission.AuthorizerFunc(func(_ context.Context, a admission.AuthorizationAttributes) (admission.AuthorizationDecision, string, error) {
	return authorizeFake(a.User.Username, a.Verb, a.APIGroup, a.Resource, a.Subresource, a.Namespace, a.Name, a.Path,
		len(a.FieldSelector), a.FieldSelectorParsingErr, a.LabelSelectorParsingErr)
})

var failurePolicies = []struct {
	name   string
	policy *admissionregistrationv1.FailurePolicyType
}{
	{"nil", nil},
	{"Fail", ptr(admissionregistrationv1.Fail)},
	{"Ignore", ptr(admissionregistrationv1.Ignore)},
}

func ptr[T any](v T) *T { return &v }
