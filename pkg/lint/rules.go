package lint

// Rule describes one lint: its stable ID, a short title, and the
// explanation and remedy every finding of it carries.
type Rule struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Why   string `json:"why"`
	Fix   string `json:"fix"`
}

// Rule IDs. They never change meaning; retired IDs are not reused.
const (
	InterceptsKubeSystem   = "AL001"
	InterceptsOwnNamespace = "AL002"
	InterceptsLeases       = "AL003"
	InterceptsNodes        = "AL004"
	InterceptsOwnEndpoints = "AL005"
	FailOnWildcard         = "AL006"
	TimeoutsOverDeadline   = "AL007"
	UnsafeSideEffects      = "AL008"
	V1beta1OnlyReview      = "AL009"
	CABundleMismatch       = "AL010"
	CertificateExpiring    = "AL011"
	NotProbed              = "AL012"
	ProbeFailed            = "AL013"
	PolicyWithoutBinding   = "AL020"
	BindingMissingPolicy   = "AL021"
	BindingMissingParam    = "AL022"
	ParamKindMismatch      = "AL023"
	CELNearCostLimit       = "AL030"
	CELCompileError        = "AL031"
)

var rules = []Rule{
	{InterceptsKubeSystem, "webhook can intercept requests in kube-system",
		"kube-system holds the components that run the cluster (DNS, proxies, controllers). When the webhook is down or slow, their writes fail or wait, and the cluster may not recover on its own.",
		"Exclude kube-system with a namespaceSelector, e.g. matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system]}]."},
	{InterceptsOwnNamespace, "webhook can intercept requests in its own namespace",
		"The webhook's own pods, deployments and secrets live in its Service's namespace. If the webhook is down, the writes that would bring it back (a new pod, a rollout) go through the webhook: a deadlock.",
		"Exclude the webhook's namespace with a namespaceSelector on kubernetes.io/metadata.name, or narrow the rules so they cannot match the webhook's own objects."},
	{InterceptsLeases, "webhook can intercept leases (coordination.k8s.io)",
		"Nodes renew their heartbeats and controllers their leader election through leases. A slow or failing webhook on leases marks nodes NotReady and stops controllers, including the ones that would repair the webhook.",
		"Remove coordination.k8s.io leases from the rules (avoid \"*\" groups and resources), or exclude kube-node-lease and kube-system."},
	{InterceptsNodes, "webhook can intercept nodes",
		"Kubelets update their Node and its status all the time. A slow or failing webhook on nodes makes nodes NotReady, which evicts pods, possibly the webhook's own.",
		"Remove nodes and nodes/status from the rules (avoid \"*\" groups and resources), or exclude nodes with an objectSelector."},
	{InterceptsOwnEndpoints, "webhook can intercept its own Service's endpoints",
		"The API server reaches a service webhook through its Service's endpoints. If the webhook must admit the writes of those Endpoints or EndpointSlices, a webhook that is down can never become reachable again.",
		"Exclude endpoints and endpointslices from the rules, or the webhook's namespace with a namespaceSelector."},
	{FailOnWildcard, "failurePolicy Fail on every resource",
		"A webhook that fails closed on \"*\" resources rejects every write of the cluster while it is unreachable, including the writes that would restore it.",
		"List the resources the webhook needs instead of \"*\", or use failurePolicy: Ignore, and exclude kube-system and the webhook's namespace."},
	{TimeoutsOverDeadline, "webhook timeouts that can add up beyond the request deadline",
		"Mutating webhooks run one after the other (again on reinvocation) and validating webhooks in parallel; when the worst case of their timeouts reaches the API server's request deadline (60s), a request times out before admission finishes.",
		"Lower timeoutSeconds (default 10s), narrow the rules so fewer webhooks match the same request, or merge webhooks."},
	{UnsafeSideEffects, "sideEffects Unknown or Some",
		"A webhook with side effects that are not conditional on dryRun makes every dry-run request it matches fail (kubectl diff, server-side dry runs), and admissionregistration.k8s.io/v1 no longer accepts these values.",
		"Make the webhook free of side effects, or skip them when the AdmissionReview has dryRun set, and declare sideEffects: None or NoneOnDryRun."},
	{V1beta1OnlyReview, "only admission.k8s.io/v1beta1 reviews accepted",
		"admission.k8s.io/v1beta1 AdmissionReview is deprecated; an API server that no longer sends it cannot call the webhook, and the request fails or is let through depending on failurePolicy.",
		"Support admission.k8s.io/v1 in the webhook and list it first: admissionReviewVersions: [v1, v1beta1]."},
	{CABundleMismatch, "caBundle does not verify the webhook's certificate",
		"The API server verifies the webhook's serving certificate with clientConfig.caBundle; if it does not verify, every call fails, and the request is rejected or let through depending on failurePolicy.",
		"Put the CA that signed the webhook's serving certificate in caBundle (base64 PEM), and make sure the certificate names the host the API server connects to."},
	{CertificateExpiring, "webhook certificate expires soon",
		"When the serving certificate expires every call to the webhook fails.",
		"Renew the certificate (cert-manager or a rotation job) well before it expires."},
	{NotProbed, "webhook not probed",
		"Service webhooks are reached through the cluster's network, which the linter does not use, so their certificate was not checked.",
		"Probe the webhook from inside the cluster, or expose it with a URL for the check."},
	{ProbeFailed, "webhook unreachable",
		"The linter could not complete a TLS handshake with the webhook; the API server may not be able to either.",
		"Check that the webhook is running and that its URL, port and certificate are right."},
	{PolicyWithoutBinding, "policy without a binding",
		"An admission policy does nothing until a binding refers to it.",
		"Create a binding whose policyName is the policy's name, or delete the policy."},
	{BindingMissingPolicy, "binding to a missing policy",
		"A binding whose policy does not exist does nothing, which usually means a typo or a policy that was deleted.",
		"Correct spec.policyName, create the policy, or delete the binding."},
	{BindingMissingParam, "binding's param not found",
		"When the param a binding names does not exist, every matching request is denied (parameterNotFoundAction Deny) or the policy is silently skipped (Allow).",
		"Create the param object the binding names, or correct spec.paramRef."},
	{ParamKindMismatch, "paramKind and paramRef do not fit",
		"A policy with a paramKind evaluates with params set to null when its binding has no paramRef; a binding's paramRef is ignored when its policy has no paramKind; a paramKind the server does not serve makes every matching request fail.",
		"Give the binding a paramRef when the policy declares paramKind, a paramKind to the policy when its bindings use params, and install the param kind's CRD (or correct apiVersion and kind)."},
	{CELNearCostLimit, "CEL expression over or near the estimated cost limit",
		"kube-apiserver estimates a CEL expression's worst-case cost from the schema of what it reads: every list, map and string as long as its maxItems, maxProperties or maxLength allows, or else as a 3 MiB request allows given the smallest serialized element. It refuses a CustomResourceDefinition validation rule estimated above 10,000,000. Admission policies are not estimated when written, but each expression is stopped at 1,000,000 of actual cost (a policy evaluation at 10,000,000), and the request is then rejected or let through depending on failurePolicy. AL030 estimates every policy expression as upstream would, typed by the schemas of the kinds the policy's rules name (built-in kinds, and CRDs among the linted objects): a warning above 10,000,000, info when nearly there, at 90% of it or more. A validation's messageExpression is info even above: when its evaluation is stopped, only the message is lost (a denial carries the validation's message instead), the decision is the same. Webhook matchConditions, and policies whose rules name no kind with a schema (wildcards), are estimated with every list and string as large as a 3 MiB request allows, and reported only when they loop.",
		"Avoid nested loops over lists and string searches (contains, matches) inside loops, bound what you iterate over (maxItems and maxLength in a CRD's schema, or check size() first), name the kinds in the rules instead of wildcards, or move the work to a variable computed once."},
	{CELCompileError, "CEL expression does not compile",
		"The API server rejects the object, or (for stored objects) the expression fails on every request it matches.",
		"Correct the expression; the message says what the compiler found."},
}

// Rules returns every rule, in ID order.
func Rules() []Rule { return append([]Rule(nil), rules...) }

// ruleByID returns the rule with id; every ID used in the package exists.
func ruleByID(id string) Rule {
	for _, r := range rules {
		if r.ID == id {
			return r
		}
	}
	panic("lint: unknown rule " + id)
}

// newFinding returns a finding of rule id with its explanation and remedy.
func newFinding(id string, sev Severity, obj Object, webhook, field, message string) Finding {
	r := ruleByID(id)
	return Finding{ID: id, Severity: sev, Object: obj, Webhook: webhook, Field: field, Message: message, Why: r.Why, Fix: r.Fix}
}
