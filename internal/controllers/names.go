package controllers

import (
	"fmt"
	"slices"
	"strings"
)

// The names of kube-controller-manager's controllers that admitd runs, as
// its --controllers flag knows them.
const (
	GarbageCollectorControllerName       = "garbage-collector-controller"
	ServiceAccountControllerName         = "serviceaccount-controller"
	ServiceAccountTokenControllerName    = "serviceaccount-token-controller"
	RootCAControllerName                 = "root-ca-certificate-publisher-controller"
	NamespaceControllerName              = "namespace-controller"
	ResourceQuotaControllerName          = "resourcequota-controller"
	ClusterRoleAggregationControllerName = "clusterrole-aggregation-controller"
	PVCProtectionControllerName          = "persistentvolumeclaim-protection-controller"
	PVProtectionControllerName           = "persistentvolume-protection-controller"
	PolicyStatusControllerName           = "validatingadmissionpolicy-status-controller"
	ReplicaSetControllerName             = "replicaset-controller"
	DeploymentControllerName             = "deployment-controller"
	ReplicationControllerControllerName  = "replicationcontroller-controller"
	StorageVersionMigratorControllerName = "storage-version-migrator-controller"
	StatefulSetControllerName            = "statefulset-controller"
	CronJobControllerName                = "cronjob-controller"
	EndpointSliceControllerName          = "endpointslice-controller"
	EndpointsControllerName              = "endpoints-controller"
	EndpointSliceMirroringControllerName = "endpointslice-mirroring-controller"
)

// kcmController is a controller of kube-controller-manager 1.37.2
// (cmd/kube-controller-manager/app's descriptors): its name, the older
// names it still accepts, and whether "*" leaves it off.
type kcmController struct {
	name              string
	aliases           []string
	disabledByDefault bool
}

// kcmControllers is every controller kube-controller-manager 1.37.2 knows
// (kube-controller-manager --help), admitd's or not.
var kcmControllers = []kcmController{
	{name: "bootstrap-signer-controller", aliases: []string{"bootstrapsigner"}, disabledByDefault: true},
	{name: "certificatesigningrequest-approving-controller", aliases: []string{"csrapproving"}},
	{name: "certificatesigningrequest-cleaner-controller", aliases: []string{"csrcleaner"}},
	{name: "certificatesigningrequest-signing-controller", aliases: []string{"csrsigning"}},
	{name: ClusterRoleAggregationControllerName, aliases: []string{"clusterrole-aggregation"}},
	{name: CronJobControllerName, aliases: []string{"cronjob"}},
	{name: "daemonset-controller", aliases: []string{"daemonset"}},
	{name: DeploymentControllerName, aliases: []string{"deployment"}},
	{name: "device-taint-eviction-controller"},
	{name: "disruption-controller", aliases: []string{"disruption"}},
	{name: EndpointsControllerName, aliases: []string{"endpoint"}},
	{name: EndpointSliceControllerName, aliases: []string{"endpointslice"}},
	{name: EndpointSliceMirroringControllerName, aliases: []string{"endpointslicemirroring"}},
	{name: "ephemeral-volume-controller", aliases: []string{"ephemeral-volume"}},
	{name: GarbageCollectorControllerName, aliases: []string{"garbagecollector"}},
	{name: "horizontal-pod-autoscaler-controller", aliases: []string{"horizontalpodautoscaling"}},
	{name: "job-controller", aliases: []string{"job"}},
	{name: "kube-apiserver-serving-clustertrustbundle-publisher-controller"},
	{name: "legacy-serviceaccount-token-cleaner-controller", aliases: []string{"legacy-service-account-token-cleaner"}},
	{name: NamespaceControllerName, aliases: []string{"namespace"}},
	{name: "node-ipam-controller", aliases: []string{"nodeipam"}},
	{name: "node-lifecycle-controller", aliases: []string{"nodelifecycle"}},
	{name: "persistentvolume-attach-detach-controller", aliases: []string{"attachdetach"}},
	{name: "persistentvolume-binder-controller", aliases: []string{"persistentvolume-binder"}},
	{name: "persistentvolume-expander-controller", aliases: []string{"persistentvolume-expander"}},
	{name: PVProtectionControllerName, aliases: []string{"pv-protection"}},
	{name: PVCProtectionControllerName, aliases: []string{"pvc-protection"}},
	{name: "pod-garbage-collector-controller", aliases: []string{"podgc"}},
	{name: "podcertificaterequest-cleaner-controller"},
	{name: "podgroup-protection-controller"},
	{name: ReplicaSetControllerName, aliases: []string{"replicaset"}},
	{name: ReplicationControllerControllerName, aliases: []string{"replicationcontroller"}},
	{name: "resourceclaim-controller", aliases: []string{"resource-claim-controller"}},
	{name: "resourcepoolstatusrequest-controller"},
	{name: ResourceQuotaControllerName, aliases: []string{"resourcequota"}},
	{name: RootCAControllerName, aliases: []string{"root-ca-cert-publisher"}},
	{name: "selinux-warning-controller", disabledByDefault: true},
	{name: "service-cidr-controller"},
	{name: ServiceAccountControllerName, aliases: []string{"serviceaccount"}},
	{name: ServiceAccountTokenControllerName, aliases: []string{"serviceaccount-token"}},
	{name: StatefulSetControllerName, aliases: []string{"statefulset"}},
	{name: StorageVersionMigratorControllerName, aliases: []string{"svm"}},
	{name: "storageversion-garbage-collector-controller", aliases: []string{"storage-version-gc"}},
	{name: "taint-eviction-controller"},
	{name: "token-cleaner-controller", aliases: []string{"tokencleaner"}, disabledByDefault: true},
	{name: "ttl-after-finished-controller", aliases: []string{"ttl-after-finished"}},
	{name: "ttl-controller", aliases: []string{"ttl"}},
	{name: PolicyStatusControllerName},
	{name: "volumeattributesclass-protection-controller"},
}

// KnownControllers lists kube-controller-manager's controllers in the
// order its --help lists them, and those "*" leaves off.
func KnownControllers() (all, disabledByDefault []string) {
	for _, c := range kcmControllers {
		all = append(all, c.name)
		if c.disabledByDefault {
			disabledByDefault = append(disabledByDefault, c.name)
		}
	}
	return all, disabledByDefault
}

// canonicalControllerName is the name of the controller name or alias
// stands for, and whether there is one.
func canonicalControllerName(name string) (string, bool) {
	for _, c := range kcmControllers {
		if c.name == name || slices.Contains(c.aliases, name) {
			return c.name, true
		}
	}
	return "", false
}

// ControllerSelection is a --controllers list as kube-controller-manager
// reads it: "*" turns on every controller not off by default, "foo" turns
// foo on and "-foo" off; the first entry naming a controller decides, and
// aliases stand for their controller's name.
type ControllerSelection struct {
	entries []string // canonical names, "-" kept
}

// ParseControllers checks a --controllers list as kube-controller-manager
// does: every entry but "*" must name one of its controllers (with or
// without "-"), or the list is refused with its message for each entry
// that does not ("\"foo\" is not in the list of known controllers").
func ParseControllers(list []string) (ControllerSelection, error) {
	var errs []error
	sel := ControllerSelection{entries: make([]string, 0, len(list))}
	for _, entry := range list {
		if entry == "*" {
			sel.entries = append(sel.entries, entry)
			continue
		}
		bare, off := strings.CutPrefix(entry, "-")
		name, ok := canonicalControllerName(bare)
		if !ok {
			errs = append(errs, fmt.Errorf("%q is not in the list of known controllers", bare))
			continue
		}
		if off {
			name = "-" + name
		}
		sel.entries = append(sel.entries, name)
	}
	switch len(errs) {
	case 0:
		return sel, nil
	case 1:
		return ControllerSelection{}, errs[0]
	}
	return ControllerSelection{}, aggregateError(errs)
}

// aggregateError prints as apimachinery's utilerrors.Aggregate of more
// than one error does: "[a, b]".
type aggregateError []error

func (a aggregateError) Error() string {
	msgs := make([]string, len(a))
	for i, err := range a {
		msgs[i] = err.Error()
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

func (a aggregateError) Unwrap() []error { return a }

// Enabled reports whether the controller named name (a canonical name)
// runs.
func (s ControllerSelection) Enabled(name string) bool {
	star := false
	for _, e := range s.entries {
		switch e {
		case name:
			return true
		case "-" + name:
			return false
		case "*":
			star = true
		}
	}
	if !star {
		return false
	}
	for _, c := range kcmControllers {
		if c.name == name {
			return !c.disabledByDefault
		}
	}
	return true
}

// Named lists the controllers the selection turns on by name (not through
// "*"), canonical names.
func (s ControllerSelection) Named() []string {
	var out []string
	for _, e := range s.entries {
		if e != "*" && !strings.HasPrefix(e, "-") {
			out = append(out, e)
		}
	}
	return out
}
